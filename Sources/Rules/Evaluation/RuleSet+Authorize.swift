import DataModel

extension RuleSet {
    /// Whether a read (a listen, a get, a REST read) of `path` is allowed (security-rules.md §3.1).
    ///
    /// Allowed iff some `.read` rule on the way from the root down to `path` (inclusive) evaluates to `true`; rules
    /// below `path` are never consulted — rules are not filters. A query is passed to the rules' `query` variable,
    /// so query-based rules (`query.orderByChild == 'owner'`) can allow it; `nil` is a plain read.
    ///
    /// - Parameters:
    ///   - path: the location read.
    ///   - query: the query of a listen or REST read, `nil` for a plain read.
    ///   - context: auth, current data and time.
    public func authorizeRead(at path: Path, query: QueryParams?, context: RulesContext) -> RulesDecision {
        var evaluation = makeEvaluation(context, newRoot: context.root, query: query.map(RuleQuery.init) ?? .plain, path: path.keys)
        var trace: [RuleEvaluation] = []
        var node: RuleNode? = root
        var depth = 0
        while let current = node {
            if let rule = current.read {
                evaluation.depth = depth
                evaluation.newData = evaluation.data
                let outcome = rule.evaluate(evaluation)
                if context.explain { trace.append(rule.traceEntry(outcome, location: path.keys[0..<depth])) }
                if case .true = outcome { return RulesDecision(allowed: true, trace: trace) }
            }
            guard depth < path.keys.count else { break }
            let key = path.keys[depth]
            node = current.child(key)
            if node != nil { evaluation.data = evaluation.data.child(key) }
            depth += 1
        }
        return RulesDecision(allowed: false, trace: trace)
    }

    /// Whether writing a value at `path` is allowed — a set, push, transaction commit, delete (the new value
    /// empty) or a priority change (§3.2, §3.3, §3.5, §3.7).
    ///
    /// A `.write` rule on the way from the root to `path` must grant; then every `.validate` must hold on each
    /// location of the chain whose new value is not null, and on every non-null location inside the written
    /// subtree that has rules. Rules see `root`/`data` from `context.root` and `newData` from `newRoot`.
    ///
    /// - Parameters:
    ///   - path: the location written.
    ///   - context: auth, the current data and `now`.
    ///   - newRoot: the whole tree as it will be after the write, server values already resolved with
    ///     `context.now` (the caller computes it anyway to apply the write).
    public func authorizeWrite(at path: Path, context: RulesContext, newRoot: Node) -> RulesDecision {
        authorize(base: path.keys, entries: [[]], context: context, newRoot: newRoot)
    }

    /// Whether a multi-location update is allowed (§3.6): every entry is judged as a set at `path` + entry, all
    /// against the one merged `newRoot`; denied as a whole if any entry is denied. Children of `path` not named in
    /// the update are not validated.
    ///
    /// - Parameters:
    ///   - path: the update's location.
    ///   - changedPaths: the entries' paths **relative to `path`**, as in the update object (`"members/carol"`); for
    ///     a `…/.priority` entry pass the path of the node whose priority changes. An empty list (an empty update)
    ///     is a no-op and allowed.
    ///   - context: auth, the current data and `now`.
    ///   - newRoot: the whole tree with every entry applied and server values resolved.
    public func authorizeUpdate(at path: Path, changedPaths: [Path], context: RulesContext, newRoot: Node) -> RulesDecision {
        guard !changedPaths.isEmpty else { return RulesDecision(allowed: true) }
        return authorize(base: path.keys, entries: changedPaths.map(\.keys), context: context, newRoot: newRoot)
    }

    func makeEvaluation(_ context: RulesContext, newRoot: Node, query: RuleQuery, path: [Key]) -> EvaluationContext {
        EvaluationContext(
            auth: context.auth.map(RuleValue.init) ?? .null, now: context.now, oldRoot: context.root, newRoot: newRoot,
            query: query, path: path, depth: 0, data: context.root, newData: newRoot,
            regexStepLimit: options.limits.maxRegexSteps)
    }

    private func authorize(base: [Key], entries: [[Key]], context: RulesContext, newRoot: Node) -> RulesDecision {
        var walker = WriteWalker(
            evaluation: makeEvaluation(context, newRoot: newRoot, query: .plain, path: []), explain: context.explain)
        let allowed = walker.authorize(root: root, base: base, entries: entries)
        return RulesDecision(allowed: allowed, trace: walker.trace)
    }
}

/// Walks the rules tree alongside the old and new data for one write (§3.5, §3.6).
private struct WriteWalker {
    var evaluation: EvaluationContext
    let explain: Bool
    var trace: [RuleEvaluation] = []

    init(evaluation: EvaluationContext, explain: Bool) {
        self.evaluation = evaluation
        self.explain = explain
    }

    /// Evaluates `rule` at the current location (`evaluation.path`, `data`, `newData`).
    private mutating func run(_ rule: CompiledRule) -> Bool {
        evaluation.depth = evaluation.path.count
        let outcome = rule.evaluate(evaluation)
        if explain { trace.append(rule.traceEntry(outcome, location: evaluation.path[...])) }
        if case .true = outcome { return true }
        return false
    }

    /// Visits one location: tries its `.write` unless access is already granted, then its `.validate` when the new
    /// value is not null. Returns false when validation fails.
    private mutating func visit(_ node: RuleNode, permitted: inout Bool, checkWrite: Bool) -> Bool {
        if checkWrite, !permitted, let rule = node.write { permitted = run(rule) }
        if let rule = node.validate, !evaluation.newData.isEmpty { return run(rule) }
        return true
    }

    private mutating func descend(_ key: Key) {
        evaluation.path.append(key)
        evaluation.data = evaluation.data.child(key)
        evaluation.newData = evaluation.newData.child(key)
    }

    mutating func authorize(root: RuleNode, base: [Key], entries: [[Key]]) -> Bool {
        let oldRoot = evaluation.oldRoot
        let newRoot = evaluation.newRoot
        // The chain from the root to the base location, shared by every entry.
        var permitted = false
        var node: RuleNode? = root
        while let current = node {
            guard visit(current, permitted: &permitted, checkWrite: true) else { return false }
            guard evaluation.path.count < base.count else { break }
            let key = base[evaluation.path.count]
            node = current.child(key)
            descend(key)
        }
        let baseNode = evaluation.path.count == base.count ? node : nil
        guard let baseNode else { return permitted }

        var visitedIntermediates: Set<[Key]> = []
        for entry in entries {
            evaluation.path = base
            evaluation.data = EvaluationContext.walk(oldRoot, base)
            evaluation.newData = EvaluationContext.walk(newRoot, base)
            var entryPermitted = permitted
            var current = baseNode
            var reached = true
            for (index, key) in entry.enumerated() {
                guard let next = current.child(key) else {
                    reached = false
                    break
                }
                descend(key)
                current = next
                if index < entry.count - 1 {
                    // An intermediate location: shared with other entries, validated once.
                    if entries.count == 1 || visitedIntermediates.insert(evaluation.path).inserted {
                        guard visit(current, permitted: &entryPermitted, checkWrite: true) else { return false }
                    } else if !entryPermitted, let rule = current.write {
                        entryPermitted = run(rule)
                    }
                }
            }
            if reached && !entry.isEmpty {
                guard visit(current, permitted: &entryPermitted, checkWrite: true) else { return false }
            }
            guard entryPermitted else { return false }
            if reached && !evaluation.newData.isEmpty {
                guard validateSubtree(current) else { return false }
            }
        }
        return true
    }

    /// Validates every non-null location below the current one that has rules (§3.3 point 2).
    private mutating func validateSubtree(_ node: RuleNode) -> Bool {
        guard node.hasChildren else { return true }
        let data = evaluation.data
        let newData = evaluation.newData
        for (key, child) in node.literalChildList {
            let newChild = newData.child(key)
            if newChild.isEmpty { continue }
            guard validateChild(child, key: key, old: data.child(key), new: newChild) else { return false }
        }
        if let wildcard = node.wildcard {
            for entry in newData.children where node.literalChildren[entry.key] == nil {
                guard validateChild(wildcard, key: entry.key, old: data.child(entry.key), new: entry.node) else { return false }
            }
        }
        return true
    }

    private mutating func validateChild(_ node: RuleNode, key: Key, old: Node, new: Node) -> Bool {
        let savedData = evaluation.data
        let savedNewData = evaluation.newData
        evaluation.path.append(key)
        evaluation.data = old
        evaluation.newData = new
        var ignored = true
        let valid = visit(node, permitted: &ignored, checkWrite: false) && validateSubtree(node)
        evaluation.path.removeLast()
        evaluation.data = savedData
        evaluation.newData = savedNewData
        return valid
    }
}
