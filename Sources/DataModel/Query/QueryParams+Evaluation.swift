extension QueryParams {
    /// The children this query selects from `node`, in index order — the reference algorithm of data-model.md §8.3
    /// (filter by bounds, sort, apply the limit), O(n log n). Live views use ``QueryWindow`` over a ``ChildIndex``
    /// instead; this is for one-shot reads without an index and for checking the incremental path.
    public func select(from node: Node) -> [ChildEntry] {
        var kept: [(position: IndexEntry, entry: ChildEntry)] = []
        for entry in node.children {
            let position = position(of: entry.node, key: entry.key)
            if boundsContain(position) { kept.append((position, entry)) }
        }
        if index != .key { kept.sort { $0.position < $1.position } }
        var selected = kept[...]
        if let limit, selected.count > limit {
            selected = anchor == .first ? selected.prefix(limit) : selected.suffix(limit)
        }
        return selected.map(\.entry)
    }

    /// The query result: an object of the selected children (keeping their priorities) without the location's own
    /// priority (§8.3); the location's value itself when the query selects everything.
    public func result(from node: Node) -> Node {
        if loadsAllData { return node }
        var entries = ContiguousArray(select(from: node))
        entries.sort { Key.compare($0.key, $1.key) < 0 }
        return Node(sortedChildren: entries, priority: nil)
    }
}

extension QueryParams {
    /// The events of this query's view when its location changes from `old` to `new`, computed from scratch by
    /// running ``select(from:)`` on both versions and comparing: O(n log n). This is the reference the incremental
    /// ``QueryWindow`` is tested against (and a fallback for one-off comparisons).
    public func events(from old: Node, to new: Node) -> [ViewEvent] {
        let before = select(from: old)
        let after = select(from: new)
        var beforeByKey: [Key: Node] = [:]
        for entry in before { beforeByKey[entry.key] = entry.node }
        var afterKeys = Set<Key>()
        var diff = WindowDiff()
        for entry in after {
            afterKeys.insert(entry.key)
            let position = position(of: entry.node, key: entry.key)
            if let previous = beforeByKey[entry.key] {
                if previous != entry.node {
                    diff.changed.append((position, entry.node, index.indexedValueChanged(from: previous, to: entry.node)))
                }
            } else {
                diff.added.append((position, entry.node))
            }
        }
        for entry in before where !afterKeys.contains(entry.key) {
            diff.removed.append((position(of: entry.node, key: entry.key), entry.node))
        }
        let order = after.map { position(of: $0.node, key: $0.key) }
        return diff.events(query: self) { position in
            guard let rank = order.firstIndex(of: position), rank > 0 else { return nil }
            return order[rank - 1].key
        }
    }
}
