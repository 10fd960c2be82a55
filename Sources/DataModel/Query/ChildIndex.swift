/// The children of one location ordered by one ``QueryIndex``: an ordered set of positions with O(log n) insert,
/// remove, rank and select, maintained incrementally as children change (data-model.md §8; the `.indexOn` index).
///
/// Only positions are stored (sort value and key, ~40 bytes per child); child values stay in the tree. A copy is an
/// O(1) snapshot (persistent B+-tree). Owned and mutated by whoever owns the location (the shard queue).
public struct ChildIndex: Sendable {
    /// The index kind.
    public let index: QueryIndex
    private var tree: SortedTree<IndexEntry>

    /// Builds the index over the children of `node` in O(n log n).
    public init(index: QueryIndex, over node: Node) {
        self.index = index
        var entries = node.children.map { IndexEntry(sortValue: index.sortValue(of: $0.node), key: $0.key) }
        if index != .key { entries.sort() }
        tree = SortedTree(sorted: entries)
    }

    /// Number of children indexed.
    public var count: Int { tree.count }

    /// Updates the position of child `key` whose value changed from `old` to `new` (either may be empty).
    public mutating func update(key: Key, from old: Node, to new: Node) {
        let oldValue = old.isEmpty ? nil : index.sortValue(of: old)
        let newValue = new.isEmpty ? nil : index.sortValue(of: new)
        if oldValue == newValue && !old.isEmpty && !new.isEmpty { return }
        if let oldValue { tree.remove(IndexEntry(sortValue: oldValue, key: key)) }
        if let newValue { tree.upsert(IndexEntry(sortValue: newValue, key: key)) }
    }

    /// Number of positions that sort before `bound` (when `bound.inclusive`) or at or before it (when not): the
    /// rank of the first position inside a range starting at `bound`.
    func rank(after bound: QueryBound) -> Int {
        rank(of: bound, includingEqual: !bound.inclusive)
    }

    /// The rank just past the last position inside a range ending at `bound`.
    func rank(through bound: QueryBound) -> Int {
        rank(of: bound, includingEqual: bound.inclusive)
    }

    private func rank(of bound: QueryBound, includingEqual: Bool) -> Int {
        tree.partitionRank { entry in
            let order = QueryParams.compare(bound, entry)
            return order > 0 || (order == 0 && includingEqual)
        }
    }

    /// The position at `rank` (0-based).
    public func entry(atRank rank: Int) -> IndexEntry { tree.element(atRank: rank) }

    /// Number of positions before `entry`, and whether it is present.
    public func rank(of entry: IndexEntry) -> (rank: Int, found: Bool) { tree.rank(of: entry) }

    /// Positions in index order starting at `rank`.
    public func entries(fromRank rank: Int) -> some Sequence<IndexEntry> { tree.elements(fromRank: rank) }

    /// The rank range of the positions a query selects: bounds first, then the limit at its anchor.
    public func selectedRanks(for query: QueryParams) -> Range<Int> {
        let lower = query.start.map { rank(after: $0) } ?? 0
        let upper = Swift.max(lower, query.end.map { rank(through: $0) } ?? count)
        guard let limit = query.limit else { return lower..<upper }
        switch query.anchor {
        case .first: return lower..<Swift.min(upper, lower + limit)
        case .last: return Swift.max(lower, upper - limit)..<upper
        }
    }
}
