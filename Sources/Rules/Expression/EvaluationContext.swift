import DataModel

/// Everything one rule expression sees (security-rules.md §4): the variables and the location it runs at.
///
/// The rule walkers keep one context per authorization and move it down and up the tree with ``descend()`` and
/// ``ascend(to:)``. It remembers the old and new node at every level of the current location, so `data`, `newData`,
/// `parent()` and paths that follow the current location (`root.child('rooms/' + $room)`) cost no lookups.
struct EvaluationContext {
    /// `auth`: `.null` when unauthenticated, otherwise the object (§8).
    var auth: RuleValue
    /// `now`, milliseconds since the Unix epoch.
    var now: Double
    /// `query`.
    var query: RuleQuery
    /// Keys of the location being judged; the rule's location is the first ``depth`` of them (`$captures` index
    /// here). Walkers may hold more keys than `depth` (the rest of the operation's path).
    var path: [Key]
    /// Depth of the rule's location.
    private(set) var depth = 0
    /// `oldNodes[i]`: the node at the first `i` keys of `path` before the operation; `oldNodes[0]` is `root`.
    private var oldNodes: [Node]
    /// The same after the operation; empty for reads, where nothing changes.
    private var newNodes: [Node]
    /// Most steps one regular-expression match may take.
    var regexStepLimit: Int

    /// A context at the root.
    ///
    /// - Parameter newRoot: the tree after the operation, `nil` for reads.
    init(auth: RuleValue, now: Double, oldRoot: Node, newRoot: Node?, query: RuleQuery, path: [Key], regexStepLimit: Int) {
        self.auth = auth
        self.now = now
        self.query = query
        self.path = path
        self.regexStepLimit = regexStepLimit
        // One allocation each, with room for the whole path and a few levels of validation below it.
        oldNodes = []
        oldNodes.reserveCapacity(path.count + 8)
        oldNodes.append(oldRoot)
        newNodes = []
        if let newRoot {
            newNodes.reserveCapacity(path.count + 8)
            newNodes.append(newRoot)
        }
    }

    /// `data`: the node at the location before the operation.
    var data: Node { oldNodes[depth] }
    /// `newData`: the node at the location after the operation (for reads, the same as `data`).
    var newData: Node { newNodes.isEmpty ? oldNodes[depth] : newNodes[depth] }

    /// Moves one level down along `path`.
    mutating func descend() {
        let key = path[depth]
        oldNodes.append(oldNodes[depth].child(key))
        if !newNodes.isEmpty { newNodes.append(newNodes[depth].child(key)) }
        depth += 1
    }

    /// Moves one level down along `path` to nodes the caller already has.
    mutating func descend(old: Node, new: Node) {
        oldNodes.append(old)
        if !newNodes.isEmpty { newNodes.append(new) }
        depth += 1
    }

    /// Moves up to `level` (at most ``depth``).
    mutating func ascend(to level: Int) {
        oldNodes.removeLast(depth - level)
        if !newNodes.isEmpty { newNodes.removeLast(depth - level) }
        depth = level
    }

    /// The node at the first `level` keys of the path (`level` at most ``depth``), before or after the operation.
    func ancestor(_ level: Int, isNew: Bool) -> Node {
        isNew && !newNodes.isEmpty ? newNodes[level] : oldNodes[level]
    }

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
            case .root: return .snapshot(RuleSnapshot(node: oldNodes[0], isNew: false, baseDepth: 0, extra: []))
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
            parent.node = Self.walk(ancestor(parent.baseDepth, isNew: parent.isNew), parent.extra)
            return .snapshot(parent)
        }
    }

    /// The snapshot `keys` below `base`. While the keys follow the current location's path from where `base` is,
    /// the nodes are already known: only the rest is looked up.
    private func descend(_ base: RuleSnapshot, _ keys: ArraySlice<Key>) -> RuleSnapshot {
        var result = base
        var remaining = keys
        if base.extra.isEmpty {
            var level = base.baseDepth
            while level < depth, let first = remaining.first, first == path[level] {
                level += 1
                remaining = remaining.dropFirst()
            }
            if level != base.baseDepth {
                result.baseDepth = level
                result.node = ancestor(level, isNew: base.isNew)
            }
        }
        result.node = Self.walk(result.node, remaining)
        result.extra = base.extra.isEmpty ? remaining : ArraySlice(Array(base.extra) + remaining)
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
}
