/// A query over the children of one location (data-model.md §8): an index, optional start and end bounds and an
/// optional limit anchored to the first or last children.
///
/// `Hashable` on normalized fields, so equal queries from different SDKs (`sin:true` sent or omitted, `[MAX_NAME]`
/// vs `[MAX_KEY]`) are one dictionary key — the gateway shares one window per distinct (location, query).
public struct QueryParams: Sendable, Hashable, CustomStringConvertible {
    /// Which side a limit keeps.
    public enum LimitAnchor: Sendable, Hashable {
        /// `limitToFirst` (wire `vf: "l"`).
        case first
        /// `limitToLast` (wire `vf: "r"`).
        case last
    }

    /// What children are ordered by.
    public var index: QueryIndex
    /// Lower bound (`startAt` / `startAfter` / `equalTo`).
    public var start: QueryBound?
    /// Upper bound (`endAt` / `endBefore` / `equalTo`).
    public var end: QueryBound?
    /// Most children selected, > 0.
    public var limit: Int?
    /// Which side ``limit`` keeps.
    public var anchor: LimitAnchor

    /// Creates query parameters; the default is the whole location in priority order.
    public init(
        index: QueryIndex = .priority, start: QueryBound? = nil, end: QueryBound? = nil, limit: Int? = nil,
        anchor: LimitAnchor = .first
    ) {
        precondition(limit.map { $0 > 0 } ?? true, "limits are positive")
        self.index = index
        self.start = start
        self.end = end
        self.limit = limit
        self.anchor = limit == nil ? .first : anchor
    }

    /// The unfiltered query: all data at the location.
    public static let all = QueryParams()

    /// Whether the query selects every child (no bounds, no limit): the SDK sends it as an untagged listen and
    /// sorts locally (wire-protocol.md §6.5).
    public var loadsAllData: Bool { start == nil && end == nil && limit == nil }

    /// The position of `child` (with `key`) under this query's index.
    public func position(of child: Node, key: Key) -> IndexEntry {
        IndexEntry(sortValue: index.sortValue(of: child), key: key)
    }

    /// Whether `position` lies within the start and end bounds (ignoring the limit).
    public func boundsContain(_ position: IndexEntry) -> Bool {
        if let start {
            let order = Self.compare(start, position)
            if order > 0 || (order == 0 && !start.inclusive) { return false }
        }
        if let end {
            let order = Self.compare(end, position)
            if order < 0 || (order == 0 && !end.inclusive) { return false }
        }
        return true
    }

    /// Three-way comparison of a bound's position with a child's position.
    static func compare(_ bound: QueryBound, _ position: IndexEntry) -> Int {
        let order = SortValue.compare(bound.value, position.sortValue)
        return order != 0 ? order : bound.name.compare(to: position.key)
    }

    /// The query in wire form (for logs).
    public var description: String { wireObject.description }
}
