import DataModel

/// Plans a write that spans shards, given the states of every participating shard captured while they are held.
///
/// Works on copies of the captured states: each planned operation is applied to the copy of the shard it is for,
/// so later targets of the same write see earlier ones, and the copies become the shards' new states at commit.
/// All decisions that involve several shards are made here and recorded as explicit operations (see
/// ``ShardOperation``), so that each shard's journal replays on its own.
struct CoordinatedWrite {
    let layout: ShardLayout
    /// Working copies of the participants' states, by shard index.
    private(set) var states: [ShardState?]
    /// Operations planned per shard index.
    private(set) var operations: [[ShardOperation]]
    private let participants: [Int]

    init(layout: ShardLayout, states: [ShardState?]) {
        self.layout = layout
        self.states = states
        operations = Array(repeating: [], count: layout.count)
        participants = states.indices.filter { states[$0] != nil }
    }

    private var view: TreeView { TreeView(layout: layout, states: states) }

    /// Plans and applies `targets`; returns the changes (whole-tree values).
    ///
    /// - Throws: ``StoreError/stale(current:)`` or a resolution error, before anything is planned.
    mutating func apply(_ targets: WriteTargets, timestamp: Double) throws(StoreError) -> [Change] {
        let before = view
        let entries = targets.entries
        if let expected = targets.expectedHash, let first = entries.first {
            let current = before.value(at: first.path)
            if Store.hash(of: current) != expected { throw .stale(current: current) }
        }
        var resolved: [ResolvedValue] = []
        for entry in entries {
            resolved.append(try entry.resolve(timestamp: timestamp) { before.value(at: $0) })
        }
        let oldValues = entries.map { before.value(at: $0.path) }
        for (entry, value) in zip(entries, resolved) {
            switch value {
            case .node(let node): set(node, at: entry.path)
            case .priority(let priority): setPriority(priority, at: entry.path)
            }
        }
        let after = view
        return zip(entries, oldValues).map { entry, old in
            Change(path: entry.path, oldValue: old, newValue: after.value(at: entry.path))
        }
    }

    // MARK: - Planning

    private mutating func emit(_ operation: ShardOperation, to shard: Int) {
        operations[shard].append(operation)
        states[shard]?.apply(operation)
    }

    private mutating func emitToAll(_ operation: ShardOperation) {
        for shard in participants { emit(operation, to: shard) }
    }

    private mutating func set(_ node: Node, at path: Path) {
        if let owner = layout.shard(for: path) {
            if !node.isEmpty, let wide = states[owner]?.wide {
                for leaf in wide.unconvertedLeafAncestors(of: path, depth: layout.depth) {
                    emit(.markWideLeafDead(leaf), to: owner)
                }
            }
            emit(.set(path, node), to: owner)
            return
        }
        // A wide path: every shard is a participant.
        finishConversions(above: path)
        if let ancestor = view.liveLeafAncestor(of: path) {
            // Writing below a leaf: nothing to delete, or the leaf becomes an object keeping its priority (§1).
            if node.isEmpty { return }
            let leafPriority = view.liveLeaf(at: ancestor)?.priority
            emitToAll(.removeWideLeaf(ancestor))
            if let leafPriority { emitToAll(.setWidePriority(ancestor, leafPriority)) }
        }
        emitToAll(.clearWide(path))
        let (slices, wideOperations) = view.split(node, at: path)
        for operation in wideOperations { emitToAll(operation) }
        for shard in participants { emit(.set(path, slices[shard]), to: shard) }
        if node.isEmpty { dropEmptiedAncestors(of: path) }
    }

    /// Replaces the wide leaves above `path` that some shard already converted by what they became (an object
    /// keeping the leaf's priority), so that no wide entry is ever stored below a leaf.
    private mutating func finishConversions(above path: Path) {
        for level in 0..<path.depth {
            let ancestor = Path(keys: Array(path.keys[..<level]))
            let view = self.view
            guard let leaf = view.replicated.leaves[ancestor], view.isConverted(ancestor) else { continue }
            emitToAll(.removeWideLeaf(ancestor))
            if view.replicated.priorities[ancestor] == nil, let priority = leaf.priority {
                emitToAll(.setWidePriority(ancestor, priority))
            }
        }
    }

    /// After a removal at a wide path, forgets the wide entries (priorities, converted leaves) of ancestors that
    /// are now empty: an empty node has no priority (§1).
    private mutating func dropEmptiedAncestors(of path: Path) {
        var ancestor = path.parent
        while let current = ancestor {
            let view = self.view
            let wide = view.replicated
            if wide.priorities[current] != nil || wide.leaves[current] != nil, view.isEmpty(atWide: current) {
                emitToAll(.clearWide(current))
            }
            ancestor = current.parent
        }
    }

    private mutating func setPriority(_ priority: Priority?, at path: Path) {
        if let owner = layout.shard(for: path) {
            emit(.setPriority(path, priority), to: owner)
            return
        }
        let view = self.view
        if view.isEmpty(atWide: path) { return }  // an empty node has no priority
        if let leaf = view.liveLeaf(at: path) {
            emitToAll(.setWideLeaf(path, leaf.withPriority(priority)))
            return
        }
        if view.replicated.leaves[path] != nil { emitToAll(.removeWideLeaf(path)) }
        emitToAll(.setWidePriority(path, priority))
    }
}
