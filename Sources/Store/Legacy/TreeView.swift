import DataModel

/// The whole tree as seen through captured shard states: values at any path, with wide locations assembled from
/// every shard's slice plus the wide state.
///
/// Used to migrate a directory of the sharded format (``LogLoader``).
struct TreeView {
    /// How the tree is split.
    let layout: ShardLayout
    /// Captured states by shard index; `nil` for shards not captured. A view used for a wide path must have all.
    let states: [ShardState?]

    /// The replicated part of the wide state (identical in every shard apart from conversion marks).
    var replicated: WideState {
        for case let state? in states { return state.wide }
        return WideState()
    }

    /// The node at `path`.
    func value(at path: Path) -> Node {
        if let owner = layout.shard(for: path) {
            return states[owner]?.root.descendant(at: path) ?? .empty
        }
        return merged(at: path)
    }

    /// Whether some shard converted the wide leaf at `path`.
    func isConverted(_ path: Path) -> Bool {
        states.contains { $0?.wide.deadLeaves.contains(path) ?? false }
    }

    /// The node at the wide path `path`, assembled from every shard.
    private func merged(at path: Path) -> Node {
        let wide = replicated
        var priority = wide.priorities[path]
        if let leaf = wide.leaves[path] {
            if !isConverted(path) { return leaf }
            priority = priority ?? leaf.priority
        }
        let slices = states.compactMap { $0?.root.descendant(at: path) }.filter { !$0.isEmpty }
        var children: [ChildEntry]
        if path.depth + 1 >= layout.depth {
            // Children are at the shard depth: each belongs to exactly one shard, so the slices are disjoint.
            children = Self.mergeDisjoint(slices)
        } else {
            var keys = Set<Key>()
            for slice in slices { for entry in slice.children { keys.insert(entry.key) } }
            for wideLeaf in wide.leaves.keys where wideLeaf.parent == path {
                if let key = wideLeaf.lastKey { keys.insert(key) }
            }
            children = keys.sorted().compactMap { key in
                let child = merged(at: path.child(key))
                return child.isEmpty ? nil : ChildEntry(key: key, node: child)
            }
        }
        return Node(children: children, priority: priority)
    }

    /// Merges the children of nodes whose key sets are disjoint into one key-ordered list (k-way merge).
    static func mergeDisjoint(_ nodes: [Node]) -> [ChildEntry] {
        if nodes.count == 1 { return Array(nodes[0].children) }
        var total = 0
        for node in nodes { total += node.childCount }
        var iterators = nodes.map(\.children)
        var heads: [ChildEntry?] = iterators.indices.map { iterators[$0].next() }
        var result: [ChildEntry] = []
        result.reserveCapacity(total)
        while true {
            var best = -1
            for index in heads.indices {
                guard let head = heads[index] else { continue }
                if best < 0 || head.key < (heads[best]?.key ?? head.key) { best = index }
            }
            guard best >= 0, let entry = heads[best] else { return result }
            result.append(entry)
            heads[best] = iterators[best].next()
        }
    }

    /// Splits `value`, to be stored at the wide path `path`, into each shard's slice and the wide operations that
    /// record its leaves and priorities at wide levels. Slices have no priorities at wide levels.
    func split(_ value: Node, at path: Path) -> (slices: [Node], wideOperations: [ShardOperation]) {
        var wideOperations: [ShardOperation] = []
        let slices = split(value, at: path, wideOperations: &wideOperations)
        return (slices, wideOperations)
    }

    private func split(_ value: Node, at path: Path, wideOperations: inout [ShardOperation]) -> [Node] {
        let empty = [Node](repeating: .empty, count: layout.count)
        if value.isEmpty { return empty }
        if value.isLeaf {
            wideOperations.append(.setWideLeaf(path, value))
            return empty
        }
        if let priority = value.priority { wideOperations.append(.setWidePriority(path, priority)) }
        var buckets = [[ChildEntry]](repeating: [], count: layout.count)
        if path.depth + 1 >= layout.depth {
            for entry in value.children {
                buckets[layout.shard(forChild: entry.key, of: path)].append(entry)
            }
        } else {
            for entry in value.children {
                let slices = split(entry.node, at: path.child(entry.key), wideOperations: &wideOperations)
                for (shard, slice) in slices.enumerated() where !slice.isEmpty {
                    buckets[shard].append(ChildEntry(key: entry.key, node: slice))
                }
            }
        }
        return buckets.map { Node(children: $0) }
    }
}

extension TreeView {
    /// The whole tree as one node.
    var wholeTree: Node { value(at: .root) }

    /// Splits a whole tree into the shard states of `layout`, each with `sequence`.
    static func partition(_ tree: Node, layout: ShardLayout, sequence: UInt64) -> [ShardState] {
        let empty = TreeView(layout: layout, states: Array(repeating: ShardState(), count: layout.count))
        let (slices, wideOperations) = empty.split(tree, at: .root)
        return slices.map { slice in
            var state = ShardState()
            state.root = slice
            state.apply(wideOperations)
            state.sequence = sequence
            return state
        }
    }
}
