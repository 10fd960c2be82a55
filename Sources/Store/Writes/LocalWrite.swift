import DataModel

/// Plans and applies a write whose targets all lie in one shard, on that shard's queue.
enum LocalWrite {
    /// What applying a write did: the changes to report and the operations to journal.
    enum Applied {
        /// A plain set, applied in one walk down the tree; its journal record is one ``ShardOperation/set(_:_:)``.
        /// Kept apart so that the hot path needs no arrays.
        case set(Change)
        /// Anything else: the operations in apply order and the changed locations.
        case general(operations: [ShardOperation], changes: [Change])

        /// The changed locations, for the change observer.
        var changes: [Change] {
            switch self {
            case .set(let change): return [change]
            case .general(_, let changes): return changes
            }
        }

        /// The result delivered to the writer.
        var outcome: WriteOutcome {
            switch self {
            case .set(let change): return WriteOutcome(change: change)
            case .general(_, let changes): return WriteOutcome(changes: changes)
            }
        }

        /// Encodes the journal payload of the record with `sequence` (see ``ShardRecordCodec``).
        func encodeRecord(sequence: UInt64, into writer: inout BinaryWriter) {
            switch self {
            case .set(let change):
                ShardRecordCodec.encode(sequence: sequence, transaction: nil,
                                        operations: CollectionOfOne(.set(change.path, change.newValue)),
                                        into: &writer)
            case .general(let operations, _):
                ShardRecordCodec.encode(sequence: sequence, transaction: nil, operations: operations, into: &writer)
            }
        }
    }

    /// Applies `write`, whose targets all lie in the shard owning `state`, and returns what it did.
    ///
    /// - Throws: ``StoreError/stale(current:)`` when a compare-and-set fails, or a resolution error; `state` is
    ///   unchanged then.
    static func apply(_ write: StoreWrite, to state: inout ShardState, layout: ShardLayout, clock: () -> Double)
        throws(StoreError) -> Applied
    {
        if case .set(.node(let path), let value, let expectedHash) = write, value.serverValues.isEmpty,
            state.wide.leaves.isEmpty
        {
            // The common case, in one walk down the tree: a plain set with nothing wide to consider.
            let node = value.node
            if let expectedHash {
                let current = state.root.descendant(at: path)
                if Store.hash(of: current) != expectedHash { throw .stale(current: current) }
            }
            var old = Node.empty
            state.root.modifyDescendant(at: path) { current in
                old = current
                current = node
            }
            return .set(Change(path: path, oldValue: old, newValue: node))
        }
        return try apply(WriteTargets(write), to: &state, layout: layout, clock: clock)
    }

    /// Applies `targets` to `state`: compare-and-set check, server values, wide leaf conversions.
    private static func apply(_ targets: WriteTargets, to state: inout ShardState, layout: ShardLayout,
                              clock: () -> Double) throws(StoreError) -> Applied
    {
        let entries = targets.entries
        if let expected = targets.expectedHash, let first = entries.first {
            let current = state.root.descendant(at: first.path)
            if Store.hash(of: current) != expected { throw .stale(current: current) }
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
        return .general(operations: operations, changes: changes)
    }
}
