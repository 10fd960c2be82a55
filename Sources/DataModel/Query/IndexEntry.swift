/// A child's position under an index: its sort value, then its key (data-model.md §8.2). Positions of distinct
/// children are distinct, because keys are.
public struct IndexEntry: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// What the index orders by (`.null` for every child under the key index).
    public var sortValue: SortValue
    /// The child's key, the tie-breaker.
    public var key: Key

    /// Creates a position.
    public init(sortValue: SortValue, key: Key) {
        self.sortValue = sortValue
        self.key = key
    }

    /// Three-way comparison: sort value, then key order.
    static func compare(_ a: IndexEntry, _ b: IndexEntry) -> Int {
        let order = SortValue.compare(a.sortValue, b.sortValue)
        return order != 0 ? order : Key.compare(a.key, b.key)
    }

    /// Index order.
    public static func < (lhs: IndexEntry, rhs: IndexEntry) -> Bool { compare(lhs, rhs) < 0 }

    /// `(value, key)` for logs.
    public var description: String { "(\(sortValue), \(key))" }
}

extension IndexEntry: SortedTreeElement {
    var sortKey: IndexEntry { self }

    static func withProbe<R>(_ key: IndexEntry, _ body: (IndexEntry) throws -> R) rethrows -> R { try body(key) }

    static func order(_ element: borrowing IndexEntry, _ probe: IndexEntry) -> Int { compare(copy element, probe) }

    static func order(key: borrowing IndexEntry, _ probe: IndexEntry) -> Int { compare(copy key, probe) }
}
