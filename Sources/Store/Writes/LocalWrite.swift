import DataModel

/// Plans and applies a write whose targets all lie in one shard, on that shard's queue.
enum LocalWrite {
    /// Applies `targets` to `state` and returns the operations to journal and the changes to report.
    ///
    /// - Throws: ``StoreError/stale(current:)`` when a compare-and-set fails, or a resolution error; `state` is
    ///   unchanged then.
    static func apply(_ targets: WriteTargets, to state: inout ShardState, layout: ShardLayout,
                      clock: () -> Double)
        throws(StoreError) -> (operations: [ShardOperation], changes: [Change])
    {
        let entries = targets.entries
        if let expected = targets.expectedHash, let first = entries.first {
            let current = state.root.descendant(at: first.path)
            if Store.hash(of: current) != expected { throw .stale(current: current) }
        }
        if entries.count == 1, let entry = entries.first, case .node(let path) = entry.target,
            entry.value.serverValues.isEmpty, state.wide.leaves.isEmpty
        {
            // The common case, in one walk down the tree: a plain set with nothing wide to consider.
            let node = entry.value.node
            var old = Node.empty
            state.root.modifyDescendant(at: path) { current in
                old = current
                current = node
            }
            return ([.set(path, node)], [Change(path: path, oldValue: old, newValue: node)])
        }
        let before = state.root
        let timestamp = clock()
        var resolved: [ResolvedValue] = []
        for entry in entries {
            resolved.append(try entry.resolve(timestamp: timestamp) { before.descendant(at: $0) })
        }
        var operations: [ShardOperation] = []
        for (entry, value) in zip(entries, resolved) {
            switch value {
            case .node(let node):
                if !node.isEmpty {
                    for leaf in state.wide.unconvertedLeafAncestors(of: entry.path, depth: layout.depth) {
                        operations.append(.markWideLeafDead(leaf))
                    }
                }
                operations.append(.set(entry.path, node))
            case .priority(let priority):
                operations.append(.setPriority(entry.path, priority))
            }
        }
        state.apply(operations)
        let after = state.root
        let changes = entries.map { entry in
            Change(path: entry.path, oldValue: before.descendant(at: entry.path),
                   newValue: after.descendant(at: entry.path))
        }
        return (operations, changes)
    }
}
