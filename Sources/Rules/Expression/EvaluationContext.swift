import DataModel

/// Everything one rule expression sees (security-rules.md §4): the variables and the location it runs at.
///
/// The rule walkers keep one context per authorization and move it down and up the tree with ``descend()`` and
/// ``ascend(to:)``. It remembers the old and new node at every level of the current location, so `data`, `newData`,
/// `parent()` and paths that follow the current location (`root.child('rooms/' + $room)`) cost no lookups.
struct EvaluationContext {
    /// One level of the current location: the key that leads to it and its nodes before and after the operation.
    private struct Level {
        /// `nil` at the root.
        var key: Key?
        var old: Node
        /// After the operation; unused (empty) for reads.
        var new: Node
    }

    /// `auth`: `.null` when unauthenticated, otherwise the object (§8).
    var auth: RuleValue
    /// `now`, milliseconds since the Unix epoch.
    var now: Double
    /// `query`, boxed because it is large and rarely read; `nil` for a plain read and for writes.
    private let queryBox: RuleQuery.Box?
    /// The keys ``descend()`` follows: the operation's path (walkers may go deeper with ``descend(key:old:new:)``).
    var path: [Key]
    /// Depth of the rule's location.
    private(set) var depth = 0
    /// `levels[i]`: the `i`-th key of the current location and the nodes there; `levels[0]` holds `root`. One
    /// array for the keys and both trees, so a context costs one allocation.
    private var levels: [Level]
    /// Whether this is a write: `newData` is then the tree after it, else the same as `data`.
    private let isWrite: Bool
    /// Most steps one regular-expression match may take.
    var regexStepLimit: Int

    /// A context at the root.
    ///
    /// - Parameter newRoot: the tree after the operation, `nil` for reads.
    init(auth: RuleValue, now: Double, oldRoot: Node, newRoot: Node?, query: RuleQuery?, path: [Key], regexStepLimit: Int) {
        self.auth = auth
        self.now = now
        self.queryBox = query.map(RuleQuery.Box.init)
        self.path = path
        self.regexStepLimit = regexStepLimit
        isWrite = newRoot != nil
        // Room for the whole path and a few levels of validation below it.
        levels = []
        levels.reserveCapacity(path.count + 8)
        levels.append(Level(key: nil, old: oldRoot, new: newRoot ?? .empty))
    }

    /// `query`.
    var query: RuleQuery { queryBox?.query ?? .plain }
    /// `root`: the whole tree before the operation.
    var root: Node { levels[0].old }
    /// `data`: the node at the location before the operation.
    var data: Node { levels[depth].old }
    /// `newData`: the node at the location after the operation (for reads, the same as `data`).
    var newData: Node { isWrite ? levels[depth].new : levels[depth].old }
    /// Whether `newData` is not null (tested in place, without copying the node out).
    var newDataExists: Bool { isWrite ? !levels[depth].new.isEmpty : !levels[depth].old.isEmpty }

    /// Moves one level down along `path`.
    mutating func descend() {
        let key = path[depth]
        let level = depth
        let isWrite = self.isWrite
        // The parents are read in place (copying them out of the array would retain and release each).
        let (old, new) = levels.withUnsafeBufferPointer { levels in
            // The old and new trees share most of their storage: one search often serves both.
            isWrite ? levels[level].old.child(key, alongside: levels[level].new) : (levels[level].old.child(key), .empty)
        }
        levels.append(Level(key: key, old: old, new: new))
        depth += 1
    }

    /// Moves one level down to child `key`, whose nodes the caller already has.
    mutating func descend(key: Key, old: Node, new: Node) {
        levels.append(Level(key: key, old: old, new: isWrite ? new : .empty))
        depth += 1
    }

    /// The key at `index` (below ``depth``) of the current location; `$captures` read theirs here.
    func key(at index: Int) -> Key {
        guard let key = levels[index + 1].key else { preconditionFailure("only the root level has no key") }
        return key
    }

    /// The keys of the current location (for traces).
    var location: [Key] { levels[1..<(depth + 1)].compactMap(\.key) }

    /// Moves up to `level` (at most ``depth``).
    mutating func ascend(to level: Int) {
        // One level at a time: `removeLast(_:)` goes through the generic range replacement, several times slower.
        while depth > level {
            levels.removeLast()
            depth -= 1
        }
    }

    /// The node at the first `level` keys of the path (`level` at most ``depth``), before or after the operation.
    func ancestor(_ level: Int, isNew: Bool) -> Node {
        isNew && isWrite ? levels[level].new : levels[level].old
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
            case .root: return .snapshot(RuleSnapshot(node: root, isNew: false, baseDepth: 0, extra: []))
            case .data: return .snapshot(RuleSnapshot(node: data, isNew: false, baseDepth: depth, extra: []))
            case .newData: return .snapshot(RuleSnapshot(node: newData, isNew: true, baseDepth: depth, extra: []))
            }
        case .capture(let index):
            return .string(key(at: index).string)
        case .queryField(let field):
            return query.value(of: field)
        case .property(.variable(.auth), let name, let source):
            // The most common member access (`auth.uid`), without copying `auth` first.
            return try property(name, of: auth, source: source)
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
        case .snapshotMethod(let receiver, .parent, let source):
            return try parent(of: snapshot(receiver, "parent", source), source: source)
        case .snapshotMethod(.variable(.data), let method, _):
            // `data.val()`, `newData.isString()`, …: the node at hand, borrowed from the levels.
            return Self.nodeMethod(method, on: levels[depth].old)
        case .snapshotMethod(.variable(.newData), let method, _):
            return isWrite ? Self.nodeMethod(method, on: levels[depth].new) : Self.nodeMethod(method, on: levels[depth].old)
        case .snapshotMethod(let receiver, .exists, let source):
            return .bool(try reference(receiver, "exists", source).exists)
        case .snapshotMethod(let receiver, let method, let source):
            return Self.nodeMethod(method, on: try reference(receiver, method.rawValue, source).resolved)
        case .child(let receiver, let argument, let source):
            let base = try snapshot(receiver, "child", source)
            return .snapshot(try descend(base, keys(argument, method: "child", source: source)))
        case .hasChild(let receiver, let argument, let source):
            let base = try reference(receiver, "hasChild", source).resolved
            return .bool(try hasDescendant(base, argument, method: "hasChild", source: source))
        case .hasChildrenNamed(let receiver, let arguments, let source):
            let base = try reference(receiver, "hasChildren", source).resolved
            for argument in arguments where !(try hasDescendant(base, argument, method: "hasChildren", source: source)) {
                return .bool(false)
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
        case .ordering(let op, let left, .constant(let constant), let source):
            // A literal on the right (`length <= 280`): no evaluation step for it.
            return try ordering(op, evaluate(left), constant, source: source)
        case .ordering(let op, let left, let right, let source):
            return try ordering(op, evaluate(left), evaluate(right), source: source)
        case .equal(let left, .constant(let constant), let negated):
            return .bool(RuleValue.identical(try evaluate(left), constant) != negated)
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
        case .json(.object(let members)):
            // The last member of that name, as JSONValue's subscript, by index so no member is copied on the way.
            for index in members.indices.reversed() where StringBytes.equal(members[index].key, name) {
                return RuleValue(members[index].value)
            }
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

    /// The node a snapshot expression stands for, without the location only `parent()` needs: `root`, `data`,
    /// `newData` and `child(…)` chains on them cost no ``RuleSnapshot`` and no key array.
    private func reference(_ expression: CompiledExpression, _ method: String, _ source: SourceRange)
        throws(EvaluationError) -> NodeReference
    {
        switch expression {
        case .variable(.root):
            return NodeReference(node: root, isNew: false, pathDepth: 0)
        case .variable(.data):
            return NodeReference(node: data, isNew: false, pathDepth: depth)
        case .variable(.newData):
            return NodeReference(node: newData, isNew: true, pathDepth: depth)
        case .child(let receiver, let argument, let childSource):
            return try walk(reference(receiver, "child", childSource), argument, method: "child", source: childSource)
        default:
            return NodeReference(try snapshot(expression, method, source))
        }
    }

    /// A snapshot method other than `parent()`, which needs only the node.
    private static func nodeMethod(_ method: CompiledExpression.SnapshotMethod, on node: Node) -> RuleValue {
        switch method {
        case .val:
            return RuleValue(node)
        case .exists:
            return .bool(!node.isEmpty)
        case .hasChildren:
            return .bool(node.hasChildren)
        case .getPriority:
            switch node.priority {
            case .number(let number)?: return .number(number)
            case .string(let text)?: return .string(text)
            case nil: return .null
            }
        case .isNumber:
            if case .number? = node.leafValue { return .bool(true) }
            return .bool(false)
        case .isString:
            if case .string? = node.leafValue { return .bool(true) }
            return .bool(false)
        case .isBoolean:
            if case .bool? = node.leafValue { return .bool(true) }
            return .bool(false)
        case .parent:
            preconditionFailure("parent() needs a snapshot's location")
        }
    }

    /// `parent()`: the snapshot one level up; the root has none.
    private func parent(of snapshot: RuleSnapshot, source: SourceRange) throws(EvaluationError) -> RuleValue {
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

    /// The snapshot `keys` below `base`. While the keys follow the current location's path from where `base` is,
    /// the nodes are already known: only the rest is looked up.
    private func descend(_ base: RuleSnapshot, _ keys: ArraySlice<Key>) -> RuleSnapshot {
        var result = base
        var remaining = keys
        if base.extra.isEmpty {
            var level = base.baseDepth
            while level < depth, let first = remaining.first, first == key(at: level) {
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
