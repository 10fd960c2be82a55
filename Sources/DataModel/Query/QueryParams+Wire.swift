extension QueryParams {
    /// Wire member names of the query object (wire-protocol.md §7).
    public enum WireKey {
        /// Index.
        public static let index = "i"
        /// Start value.
        public static let startValue = "sp"
        /// Start name.
        public static let startName = "sn"
        /// Start inclusive (JS only).
        public static let startInclusive = "sin"
        /// End value.
        public static let endValue = "ep"
        /// End name.
        public static let endName = "en"
        /// End inclusive (JS only).
        public static let endInclusive = "ein"
        /// Limit.
        public static let limit = "l"
        /// Limit anchor: `"l"` first, `"r"` last.
        public static let viewFrom = "vf"
    }

    /// Parses a wire query object (`q` of a listen, get or unlisten; `{}` is the unfiltered query).
    ///
    /// Unknown members are ignored (forward compatibility); known members are type-checked as data-model.md §8.5
    /// requires of clients, since REST clients might send anything.
    /// - Throws: ``QueryError``.
    public init(wireObject: JSONValue) throws(QueryError) {
        guard case .object = wireObject else { throw .notAnObject }
        var index = QueryIndex.priority
        if let member = wireObject[WireKey.index] {
            guard case .string(let text) = member else { throw .invalidMember(WireKey.index) }
            index = try Self.index(named: text)
        }
        let start = try Self.bound(
            in: wireObject, value: WireKey.startValue, name: WireKey.startName,
            inclusive: WireKey.startInclusive, index: index, defaultName: .min)
        let end = try Self.bound(
            in: wireObject, value: WireKey.endValue, name: WireKey.endName,
            inclusive: WireKey.endInclusive, index: index, defaultName: .max)
        var limit: Int?
        var anchor = LimitAnchor.first
        if let member = wireObject[WireKey.limit] {
            guard case .number(let number) = member, number >= 1, number <= 1e15, number == number.rounded() else {
                throw .invalidLimit
            }
            limit = Int(number)
            if let viewFrom = wireObject[WireKey.viewFrom] {
                guard case .string(let side) = viewFrom, side == "l" || side == "r" else {
                    throw .invalidMember(WireKey.viewFrom)
                }
                anchor = side == "r" ? .last : .first
            }
        }
        self.init(index: index, start: start, end: end, limit: limit, anchor: anchor)
    }

    private static func index(named text: String) throws(QueryError) -> QueryIndex {
        if CodeUnitOrder.equal(text, ".key") { return .key }
        if CodeUnitOrder.equal(text, ".value") { return .value }
        if CodeUnitOrder.equal(text, ".priority") { return .priority }
        let path: Path
        do {
            path = try Path(text)
        } catch {
            throw .invalidIndexPath(error)
        }
        guard !path.isRoot else { throw .invalidIndexPath(.emptyKey) }
        return .child(path)
    }

    private static func bound(
        in object: JSONValue, value valueKey: String, name nameKey: String, inclusive inclusiveKey: String,
        index: QueryIndex, defaultName: BoundName
    ) throws(QueryError) -> QueryBound? {
        guard let raw = object[valueKey] else { return nil }
        var inclusive = true
        if let member = object[inclusiveKey] {
            guard case .bool(let flag) = member else { throw .invalidMember(inclusiveKey) }
            inclusive = flag
        }
        var name = defaultName
        if let member = object[nameKey] {
            guard case .string(let text) = member else { throw .invalidMember(nameKey) }
            name = BoundName(wireName: text)
        }
        switch (index, raw) {
        case (.key, .string(let text)):
            return QueryBound(value: .null, name: .key(Key(unchecked: text)), inclusive: inclusive)
        case (.key, _):
            throw .invalidBound(valueKey)
        case (.priority, .bool), (_, .array), (_, .object):
            throw .invalidBound(valueKey)
        case (_, .null):
            return QueryBound(value: .null, name: name, inclusive: inclusive)
        case (_, .bool(let flag)):
            return QueryBound(value: .bool(flag), name: name, inclusive: inclusive)
        case (_, .number(let number)):
            return QueryBound(value: .number(number), name: name, inclusive: inclusive)
        case (_, .string(let text)):
            return QueryBound(value: .string(text), name: name, inclusive: inclusive)
        }
    }

    /// The query as a wire object, in the JS SDK's member order (`sp`, `sn`, `sin`, `ep`, `en`, `ein`, `l`, `vf`,
    /// `i`); `{}` for the unfiltered query. Default names and inclusivity are omitted.
    public var wireObject: JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        func append(_ bound: QueryBound, value: String, name: String, inclusive: String, defaultName: BoundName) {
            if index == .key, case .key(let key) = bound.name {
                members.append((value, .string(key.string)))
            } else {
                members.append((value, Self.json(bound.value)))
                if bound.name != defaultName { members.append((name, .string(bound.name.description))) }
            }
            if !bound.inclusive { members.append((inclusive, .bool(false))) }
        }
        if let start { append(start, value: WireKey.startValue, name: WireKey.startName, inclusive: WireKey.startInclusive, defaultName: .min) }
        if let end { append(end, value: WireKey.endValue, name: WireKey.endName, inclusive: WireKey.endInclusive, defaultName: .max) }
        if let limit {
            members.append((WireKey.limit, .number(Double(limit))))
            members.append((WireKey.viewFrom, .string(anchor == .last ? "r" : "l")))
        }
        if index != .priority { members.append((WireKey.index, .string(index.description))) }
        return .object(members)
    }

    private static func json(_ value: SortValue) -> JSONValue {
        switch value {
        case .null, .object: return .null
        case .bool(let flag): return .bool(flag)
        case .number(let number): return .number(number)
        case .string(let text): return .string(text)
        }
    }

    /// The SDK's query identifier: `"default"` for the unfiltered query, else the wire object with members sorted
    /// by name (JS `ObjectToUniqueKey`), e.g. `{"l":2,"vf":"r"}`. Stable across SDKs for equal queries, since it is
    /// built from the normalized parameters.
    public var identifier: String {
        guard case .object(let members) = wireObject, !members.isEmpty else { return "default" }
        let sorted = members.sorted { CodeUnitOrder.compare($0.key, $1.key) < 0 }
        return JSONValue.object(sorted).description
    }
}
