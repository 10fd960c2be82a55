import DataModel

/// The `query` variable of `.read` rules (security-rules.md §7): how the read is ordered, bounded and limited.
struct RuleQuery: Sendable {
    /// The fields a rule may read.
    enum Field: String, Sendable, CaseIterable {
        case orderByKey, orderByPriority, orderByValue, orderByChild, startAt, endAt, equalTo, limitToFirst, limitToLast
    }

    var orderByKey = true
    var orderByPriority = false
    var orderByValue = false
    var orderByChild = RuleValue.null
    var startAt = RuleValue.null
    var endAt = RuleValue.null
    var equalTo = RuleValue.null
    var limitToFirst = RuleValue.null
    var limitToLast = RuleValue.null

    /// A query shared by reference: evaluation contexts carry it without copying its values.
    final class Box: Sendable {
        let query: RuleQuery

        init(_ query: RuleQuery) {
            self.query = query
        }
    }

    /// A plain read without query: key order, no bounds, no limits (also what `.write`/`.validate` rules see).
    static let plain = RuleQuery()

    /// The rules' view of a query.
    ///
    /// The priority index is reported as key order: it is what every SDK sends for a query without `orderBy*`, and
    /// the wire cannot tell it from an explicit `orderByPriority()` (§7). Equal inclusive start and end bounds — how
    /// `equalTo(v)` travels — report `equalTo = v` and also `startAt = endAt = v`. Bound names (`startAt(v, key)`)
    /// are not visible to rules.
    init(_ params: QueryParams) {
        switch params.index {
        case .priority:
            break
        case .key:
            break
        case .value:
            orderByKey = false
            orderByValue = true
        case .child(let path):
            orderByKey = false
            orderByChild = .string(path.keys.map(\.string).joined(separator: "/"))
        }
        if let start = params.start { startAt = Self.value(start, index: params.index) }
        if let end = params.end { endAt = Self.value(end, index: params.index) }
        if let start = params.start, let end = params.end, start.inclusive, end.inclusive, start.value == end.value,
            start.name == end.name || Self.isSentinelPair(start.name, end.name)
        {
            equalTo = startAt
        }
        if let limit = params.limit {
            switch params.anchor {
            case .first: limitToFirst = .number(Double(limit))
            case .last: limitToLast = .number(Double(limit))
            }
        }
    }

    private init() {}

    /// `equalTo(v)` without a key sends start name `[MIN_NAME]` and end name `[MAX_NAME]`.
    private static func isSentinelPair(_ start: BoundName, _ end: BoundName) -> Bool {
        if case .min = start, case .max = end { return true }
        return false
    }

    /// A bound's value; under key order the bound is a key, carried as the bound's name.
    private static func value(_ bound: QueryBound, index: QueryIndex) -> RuleValue {
        if case .key = index {
            if case .key(let key) = bound.name { return .string(key.string) }
            return .null
        }
        switch bound.value {
        case .null, .object: return .null
        case .bool(let flag): return .bool(flag)
        case .number(let number): return .number(number)
        case .string(let text): return .string(text)
        }
    }

    /// The value of one field.
    func value(of field: Field) -> RuleValue {
        switch field {
        case .orderByKey: return .bool(orderByKey)
        case .orderByPriority: return .bool(orderByPriority)
        case .orderByValue: return .bool(orderByValue)
        case .orderByChild: return orderByChild
        case .startAt: return startAt
        case .endAt: return endAt
        case .equalTo: return equalTo
        case .limitToFirst: return limitToFirst
        case .limitToLast: return limitToLast
        }
    }
}
