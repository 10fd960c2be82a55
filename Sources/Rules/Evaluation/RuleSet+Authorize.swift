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
        var evaluation = makeEvaluation(context, newRoot: nil, query: query.map(RuleQuery.init), path: path.keys)
        var trace: [RuleEvaluation] = []
        var node = root
        while true {
            if let rule = node.read {
                let outcome = rule.evaluate(evaluation)
                if context.explain { trace.append(rule.traceEntry(outcome, location: path.keys[0..<evaluation.depth])) }
                if case .true = outcome { return RulesDecision(allowed: true, trace: trace) }
            }
            guard evaluation.depth < path.keys.count, let next = node.child(path.keys[evaluation.depth]) else { break }
            node = next
            evaluation.descend()
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
        authorize(base: path.keys, entries: Self.wholeLocation, context: context, newRoot: newRoot)
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

    /// The one entry of a set: the location itself.
    private static let wholeLocation: [[Key]] = [[]]

    /// An evaluation context at the root; `query` is `nil` for writes and plain reads.
    func makeEvaluation(_ context: RulesContext, newRoot: Node?, query: RuleQuery?, path: [Key]) -> EvaluationContext {
        EvaluationContext(
            auth: context.auth.map(RuleValue.init) ?? .null, now: context.now, oldRoot: context.root, newRoot: newRoot,
            query: query, path: path, regexStepLimit: options.limits.maxRegexSteps)
    }

    private func authorize(base: [Key], entries: [[Key]], context: RulesContext, newRoot: Node) -> RulesDecision {
        var walker = WriteWalker(
            evaluation: makeEvaluation(context, newRoot: newRoot, query: nil, path: base), explain: context.explain)
        let allowed = walker.authorize(root: root, base: base, entries: entries)
        return RulesDecision(allowed: allowed, trace: walker.trace)
    }
}

/// Walks the rules tree alongside the old and new data for one write (§3.5, §3.6).
///
/// `evaluation.path` holds the keys of the location being judged (base plus entry, then deeper keys while
/// validating a subtree) and `evaluation.depth` how many of them lead to the rule node at hand, so walking down
/// never copies the path.
private struct WriteWalker {
    var evaluation: EvaluationContext
    let explain: Bool
    var trace: [RuleEvaluation] = []

    init(evaluation: EvaluationContext, explain: Bool) {
        self.evaluation = evaluation
        self.explain = explain
    }

    /// Evaluates `rule` at the current location.
    private mutating func run(_ rule: CompiledRule) -> Bool {
        let outcome = rule.evaluate(evaluation)
        if explain { trace.append(rule.traceEntry(outcome, location: evaluation.location[...])) }
        if case .true = outcome { return true }
        return false
    }

    /// Visits one location: tries its `.write` unless access is already granted, then its `.validate` when the new
    /// value is not null. Returns false when validation fails.
    private mutating func visit(_ node: RuleNode, permitted: inout Bool, checkWrite: Bool) -> Bool {
        if checkWrite, !permitted, let rule = node.write { permitted = run(rule) }
        if let rule = node.validate, evaluation.newDataExists { return run(rule) }
        return true
    }

    mutating func authorize(root: RuleNode, base: [Key], entries: [[Key]]) -> Bool {
        // The chain from the root to the base location, shared by every entry.
        var permitted = false
        var node = root
        while true {
            guard visit(node, permitted: &permitted, checkWrite: true) else { return false }
            guard evaluation.depth < base.count else { break }
            // No rule nodes below: nothing further can grant or validate.
            guard let next = node.child(base[evaluation.depth]) else { return permitted }
            node = next
            evaluation.descend()
        }
        var visitedIntermediates: Set<[Key]> = []
        for entry in entries {
            evaluation.ascend(to: base.count)
            evaluation.path = entry.isEmpty ? base : base + entry
            var entryPermitted = permitted
            var current = node
            var reached = true
            for index in entry.indices {
                guard let next = current.child(entry[index]) else {
                    reached = false
                    break
                }
                evaluation.descend()
                current = next
                if index < entry.count - 1 {
                    // An intermediate location: possibly shared with other entries, validated once.
                    if entries.count == 1 || visitedIntermediates.insert(evaluation.location).inserted {
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
            if reached && evaluation.newDataExists {
                guard validateSubtree(current) else { return false }
            }
        }
        return true
    }

    /// Validates every non-null location below the current one that has rules (§3.3 point 2).
    private mutating func validateSubtree(_ node: RuleNode) -> Bool {
        guard node.hasChildren, node.hasValidation else { return true }
        let data = evaluation.data
        let newData = evaluation.newData
        var literalsPresent = 0
        for (key, child) in node.literalChildList {
            let (newChild, oldChild) = newData.child(key, alongside: data)
            if newChild.isEmpty { continue }
            literalsPresent += 1
            guard child.hasValidation else { continue }
            guard validateChild(child, key: key, old: oldChild, new: newChild) else { return false }
        }
        guard let wildcard = node.wildcard, wildcard.hasValidation, newData.childCount > literalsPresent else { return true }
        if node.wildcardAlwaysFails, !explain, let rule = wildcard.validate {
            // `"$other": {".validate": false}` and a key not named literally: denied, whatever the key.
            _ = rule.evaluate(evaluation)
            return false
        }
        for entry in newData.children where node.literalChild(entry.key) == nil {
            guard validateChild(wildcard, key: entry.key, old: data.child(entry.key), new: entry.node) else { return false }
        }
        return true
    }

    private mutating func validateChild(_ node: RuleNode, key: Key, old: Node, new: Node) -> Bool {
        let level = evaluation.depth
        evaluation.descend(key: key, old: old, new: new)
        var ignored = true
        let valid = visit(node, permitted: &ignored, checkWrite: false) && validateSubtree(node)
        evaluation.ascend(to: level)
        return valid
    }
}
