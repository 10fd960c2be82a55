import DataModel

/// Everything one rule expression sees (security-rules.md §4): the variables and the location it runs at.
///
/// Built by the rule walkers for each location they visit; holds no copies of the tree beyond the shared
/// copy-on-write nodes, so making one costs a few retains.
struct EvaluationContext {
    /// `auth`: `.null` when unauthenticated, otherwise the object (§8).
    var auth: RuleValue
    /// `now`, milliseconds since the Unix epoch.
    var now: Double
    /// The whole tree before the operation (`root`).
    var oldRoot: Node
    /// The whole tree as it will be after the operation (the same as `oldRoot` for reads).
    var newRoot: Node
    /// `query`.
    var query: RuleQuery
    /// Keys of the operation's path; the rule's location is the first `depth` of them (`$captures` index here).
    var path: [Key]
    /// Depth of the rule's location.
    var depth: Int
    /// `data`: the node at the location before the operation.
    var data: Node
    /// `newData`: the node at the location after the operation.
    var newData: Node
    /// Most steps one regular-expression match may take.
    var regexStepLimit: Int

    /// Evaluates a whole rule: `true` only for the boolean `true`.
    func evaluateRule(_ expression: CompiledExpression, source: SourceRange) throws(EvaluationError) -> Bool {
        let value = try evaluate(expression)
        guard case .bool(let result) = value else {
            throw EvaluationError(.resultNotBoolean(found: value.typeName), source)
        }
        return result
    }

    func evaluate(_ expression: CompiledExpression) throws(EvaluationError) -> RuleValue {
        switch expression {
        case .constant(let value):
            return value
        case .variable(let variable):
            switch variable {
            case .auth: return auth
            case .now: return .number(now)
            case .root: return .snapshot(RuleSnapshot(node: oldRoot, isNew: false, baseDepth: 0, extra: []))
            case .data: return .snapshot(RuleSnapshot(node: data, isNew: false, baseDepth: depth, extra: []))
            case .newData: return .snapshot(RuleSnapshot(node: newData, isNew: true, baseDepth: depth, extra: []))
            }
        case .capture(let index):
            return .string(path[index].string)
        case .queryField(let field):
            return query.value(of: field)
        case .property(let receiver, let name, let source):
            return try property(name, of: evaluate(receiver), source: source)
        case .element(let receiver, let index, let source):
            return try element(of: evaluate(receiver), at: evaluate(index), source: source)
        case .length(let receiver, let source):
            let value = try evaluate(receiver)
            guard case .string(let text) = value else {
                throw EvaluationError(.notAString(member: "length", found: value.typeName), source)
            }
            return .number(Double(text.utf16.count))
        case .snapshotMethod(let receiver, let method, let source):
            return try snapshotMethod(method, on: snapshot(receiver, method.rawValue, source), source: source)
        case .child(let receiver, let argument, let source):
            let base = try snapshot(receiver, "child", source)
            return .snapshot(try descend(base, keys(argument, method: "child", source: source)))
        case .hasChild(let receiver, let argument, let source):
            let base = try snapshot(receiver, "hasChild", source)
            return .bool(!Self.walk(base.node, try keys(argument, method: "hasChild", source: source)).isEmpty)
        case .hasChildrenNamed(let receiver, let arguments, let source):
            let base = try snapshot(receiver, "hasChildren", source)
            for argument in arguments {
                let keys = try keys(argument, method: "hasChildren", source: source)
                if Self.walk(base.node, keys).isEmpty { return .bool(false) }
            }
            return .bool(true)
        case .stringMethod(let receiver, let method, let arguments, let source):
            return try stringMethod(method, receiver: receiver, arguments: arguments, source: source)
        case .matches(let receiver, let program, let source):
            let value = try evaluate(receiver)
            guard case .string(let text) = value else {
                throw EvaluationError(.notAString(member: "matches", found: value.typeName), source)
            }
            var budget = regexStepLimit
            guard let matched = program.matches(text, budget: &budget) else {
                throw EvaluationError(.regexTooExpensive(limit: regexStepLimit), source)
            }
            return .bool(matched)
        case .not(let operand, let source):
            let value = try evaluate(operand)
            guard case .bool(let flag) = value else {
                throw EvaluationError(.notBoolean(context: "'!'", found: value.typeName), source)
            }
            return .bool(!flag)
        case .negate(let operand, let source):
            let value = try evaluate(operand)
            guard case .number(let number) = value else {
                throw EvaluationError(.negateType(found: value.typeName), source)
            }
            return .number(-number)
        case .arithmetic(let op, let left, let right, let source):
            return try arithmetic(op, evaluate(left), evaluate(right), source: source)
        case .ordering(let op, let left, let right, let source):
            return try ordering(op, evaluate(left), evaluate(right), source: source)
        case .equal(let left, let right, let negated):
            let identical = RuleValue.identical(try evaluate(left), try evaluate(right))
            return .bool(identical != negated)
        case .and(let operands, let source):
            for operand in operands {
                let value = try evaluate(operand)
                guard case .bool(let flag) = value else {
                    throw EvaluationError(.notBoolean(context: "'&&'", found: value.typeName), source)
                }
                if !flag { return .bool(false) }
            }
            return .bool(true)
        case .or(let operands, let source):
            for operand in operands {
                let value = try evaluate(operand)
                guard case .bool(let flag) = value else {
                    throw EvaluationError(.notBoolean(context: "'||'", found: value.typeName), source)
                }
                if flag { return .bool(true) }
            }
            return .bool(false)
        case .conditional(let condition, let then, let otherwise, let source):
            let value = try evaluate(condition)
            guard case .bool(let flag) = value else {
                throw EvaluationError(.notBoolean(context: "the condition of '?:'", found: value.typeName), source)
            }
            return try evaluate(flag ? then : otherwise)
        }
    }

    // MARK: - Members

    /// `value.name` where the type is known only now: objects give the member (or null), null gives null, strings
    /// have `length`.
    private func property(_ name: String, of value: RuleValue, source: SourceRange) throws(EvaluationError) -> RuleValue {
        switch value {
        case .null:
            return .null
        case .json(let json):
            if case .array(let elements) = json, name == "length" { return .number(Double(elements.count)) }
            return json[name].map(RuleValue.init) ?? .null
        case .string(let text) where name == "length":
            return .number(Double(text.utf16.count))
        default:
            throw EvaluationError(.noProperty(name: name, found: value.typeName), source)
        }
    }

    /// `value[index]` where the type is known only now: object members by string (numbers name members as
    /// JavaScript prints them), array elements by integer index.
    private func element(of value: RuleValue, at index: RuleValue, source: SourceRange) throws(EvaluationError) -> RuleValue {
        let name: String
        switch index {
        case .string(let text): name = text
        case .number(let number):
            if case .json(.array(let elements)) = value {
                guard number >= 0, number < Double(elements.count), number == number.rounded(.towardZero) else { return .null }
                return RuleValue(elements[Int(number)])
            }
            name = Self.format(number)
        default:
            throw EvaluationError(.invalidIndex(found: index.typeName), source)
        }
        return try property(name, of: value, source: source)
    }

    // MARK: - Snapshots

    private func snapshot(_ receiver: CompiledExpression, _ method: String, _ source: SourceRange) throws(EvaluationError)
        -> RuleSnapshot
    {
        let value = try evaluate(receiver)
        guard case .snapshot(let snapshot) = value else {
            throw EvaluationError(.notASnapshot(method: method, found: value.typeName), source)
        }
        return snapshot
    }

    private func snapshotMethod(_ method: CompiledExpression.SnapshotMethod, on snapshot: RuleSnapshot, source: SourceRange)
        throws(EvaluationError) -> RuleValue
    {
        switch method {
        case .val:
            return RuleValue(snapshot.node)
        case .exists:
            return .bool(!snapshot.node.isEmpty)
        case .hasChildren:
            return .bool(snapshot.node.hasChildren)
        case .getPriority:
            switch snapshot.node.priority {
            case .number(let number)?: return .number(number)
            case .string(let text)?: return .string(text)
            case nil: return .null
            }
        case .isNumber:
            if case .number? = snapshot.node.leafValue { return .bool(true) }
            return .bool(false)
        case .isString:
            if case .string? = snapshot.node.leafValue { return .bool(true) }
            return .bool(false)
        case .isBoolean:
            if case .bool? = snapshot.node.leafValue { return .bool(true) }
            return .bool(false)
        case .parent:
            var parent = snapshot
            if !parent.extra.isEmpty {
                parent.extra = parent.extra.dropLast()
            } else {
                guard parent.baseDepth > 0 else { throw EvaluationError(.parentOfRoot, source) }
                parent.baseDepth -= 1
            }
            var node = parent.isNew ? newRoot : oldRoot
            for index in 0..<parent.baseDepth {
                node = node.child(path[index])
                if node.isEmpty { break }
            }
            parent.node = Self.walk(node, parent.extra)
            return .snapshot(parent)
        }
    }

    /// The snapshot `keys` below `base`.
    private func descend(_ base: RuleSnapshot, _ keys: ArraySlice<Key>) -> RuleSnapshot {
        var result = base
        result.node = Self.walk(base.node, keys)
        result.extra = base.extra.isEmpty ? keys : ArraySlice(Array(base.extra) + keys)
        return result
    }

    /// The descendant of `node` at `keys` (empty when any is missing).
    static func walk(_ node: Node, _ keys: some Collection<Key>) -> Node {
        var current = node
        for key in keys {
            current = current.child(key)
            if current.isEmpty { return current }
        }
        return current
    }

    /// The keys of a path argument: literal ones as compiled, computed ones split at `/` (empty segments, so
    /// leading and trailing slashes, are ignored).
    private func keys(_ argument: CompiledExpression.PathArgument, method: String, source: SourceRange)
        throws(EvaluationError) -> ArraySlice<Key>
    {
        switch argument {
        case .keys(let keys):
            return keys[...]
        case .computed(let expression):
            let value = try evaluate(expression)
            guard case .string(let text) = value else {
                throw EvaluationError(.argumentNotAString(method: method, found: value.typeName), source)
            }
            return Self.pathKeys(text)[...]
        }
    }

    /// Splits a rules path at `/` into keys, dropping empty segments.
    ///
    /// A segment that is not a valid key (`bob@example.com` has a `.`) is kept as it is: no stored key can equal
    /// it, so the location simply does not exist — Firebase evaluates `root.child('banned/' + auth.uid)` with such a
    /// uid without error (security-rules.md §14 live facts), and `parent()` still walks back through it.
    static func pathKeys(_ text: String) -> [Key] {
        text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).map {
            Key(trusted: String(decoding: $0, as: UTF8.self))
        }
    }
}
