import DataModel

/// What a REST `GET` (or stream) reads, from its query parameters (rest-api.md §3, §4).
enum RESTReadShape: Sendable, Equatable {
    /// The whole location.
    case full
    /// Keys only: object children become `true`. `limit` is the emulator quirk `shallow=true&limitToFirst=N`
    /// (rest-api.md §8.3): the first or last N keys in key order.
    case shallow(limit: Int?, anchor: QueryParams.LimitAnchor)
    /// A filtered query.
    case query(QueryParams)

    private static let filterNames = ["startAt", "endAt", "equalTo", "startAfter", "endBefore", "limitToFirst", "limitToLast"]
    private static let rangeNames = ["orderBy", "startAt", "endAt", "equalTo", "startAfter", "endBefore"]

    /// Reads the shape from `parameters`.
    ///
    /// - Throws: ``RESTError`` with Firebase's text for every invalid combination.
    init(_ parameters: QueryString) throws(RESTError) {
        if parameters["shallow"] == "true" {
            guard !parameters.containsAny(Self.rangeNames) else {
                throw .badRequest("Mixing 'shallow' and querying parameters is not supported")
            }
            let (limit, anchor) = try Self.limit(parameters)
            self = .shallow(limit: limit, anchor: anchor)
            return
        }
        guard let orderBy = parameters["orderBy"] else {
            guard !parameters.containsAny(Self.filterNames) else {
                throw .badRequest("orderBy must be defined when other query parameters are defined")
            }
            self = .full
            return
        }
        var wire: [(key: String, value: JSONValue)] = []
        let index = try Self.index(orderBy)
        wire.append((QueryParams.WireKey.index, .string(index)))
        let isKeyIndex = index == ".key"
        if let equalTo = parameters["equalTo"] {
            guard parameters["startAt"] == nil, parameters["endAt"] == nil,
                  parameters["startAfter"] == nil, parameters["endBefore"] == nil
            else { throw .badRequest("equalTo cannot be combined with startAt or endAt") }
            let bound = try Self.bound(equalTo, isKeyIndex: isKeyIndex)
            Self.append(bound, inclusive: true, start: true, to: &wire)
            Self.append(bound, inclusive: true, start: false, to: &wire)
        }
        for (name, start, inclusive) in [("startAt", true, true), ("startAfter", true, false),
                                         ("endAt", false, true), ("endBefore", false, false)] {
            guard let text = parameters[name] else { continue }
            let taken = start ? wire.contains { $0.key == QueryParams.WireKey.startValue }
                              : wire.contains { $0.key == QueryParams.WireKey.endValue }
            guard !taken else { throw .badRequest("Only one of startAt and startAfter, and one of endAt and endBefore, may be given") }
            Self.append(try Self.bound(text, isKeyIndex: isKeyIndex), inclusive: inclusive, start: start, to: &wire)
        }
        let (limit, anchor) = try Self.limit(parameters)
        if let limit {
            wire.append((QueryParams.WireKey.limit, .number(Double(limit))))
            wire.append((QueryParams.WireKey.viewFrom, .string(anchor == .first ? "l" : "r")))
        }
        do {
            self = .query(try QueryParams(wireObject: .object(wire)))
        } catch {
            switch error {
            case .invalidBound where isKeyIndex: throw .badRequest("Provided key index type is invalid, must be string")
            case .invalidIndexPath: throw .badRequest("orderBy must be a valid JSON encoded path")
            default: throw .badRequest("Constraint index field must be a JSON primitive")
            }
        }
    }

    /// The wire index name for an `orderBy` value: a JSON string, `"$key"`, `"$value"`, `"$priority"` or a path.
    private static func index(_ text: String) throws(RESTError) -> String {
        guard case .string(let name)? = try? JSONReader.readValue(Array(text.utf8)), !name.isEmpty else {
            throw .badRequest("orderBy must be a valid JSON encoded path")
        }
        switch name {
        case "$key": return ".key"
        case "$value": return ".value"
        case "$priority": return ".priority"
        default:
            guard !name.hasPrefix("$"), (try? Path(name)).map({ !$0.isRoot }) == true else {
                throw .badRequest("orderBy must be a valid JSON encoded path")
            }
            return name
        }
    }

    /// A bound: a JSON primitive, optionally followed by `,` and a JSON string key name (`5,"bob"`).
    private static func bound(_ text: String, isKeyIndex: Bool) throws(RESTError) -> (value: JSONValue, name: String?) {
        let bytes = Array(text.utf8)
        let split = valueEnd(bytes)
        guard let value = try? JSONReader.readValue(Array(bytes[..<split])) else {
            throw .badRequest("Constraint index field must be a JSON primitive")
        }
        switch value {
        case .array, .object: throw .badRequest("Constraint index field must be a JSON primitive")
        case .string: break
        default: if isKeyIndex { throw .badRequest("Provided key index type is invalid, must be string") }
        }
        guard split < bytes.count else { return (value, nil) }
        guard case .string(let name)? = try? JSONReader.readValue(Array(bytes[(split + 1)...])) else {
            throw .badRequest("Constraint key field must be a valid key name")
        }
        return (value, name)
    }

    /// Where the value part of a bound ends: after a leading JSON string, otherwise at the first comma.
    private static func valueEnd(_ bytes: [UInt8]) -> Int {
        var index = 0
        while index < bytes.count, bytes[index] == UInt8(ascii: " ") { index += 1 }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
            return bytes.firstIndex(of: UInt8(ascii: ",")) ?? bytes.count
        }
        index += 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""):
                let end = index + 1
                return bytes[end...].firstIndex(of: UInt8(ascii: ",")) ?? bytes.count
            default: index += 1
            }
        }
        return bytes.count
    }

    private static func append(
        _ bound: (value: JSONValue, name: String?), inclusive: Bool, start: Bool,
        to wire: inout [(key: String, value: JSONValue)]
    ) {
        wire.append((start ? QueryParams.WireKey.startValue : QueryParams.WireKey.endValue, bound.value))
        // Without a key name an exclusive bound leaves out every child at that value: startAfter(v) starts after
        // the last key at v, endBefore(v) ends before the first (as the SDKs send them).
        let name = bound.name ?? (inclusive ? nil : (start ? BoundName.maxNameText : BoundName.minNameText))
        if let name { wire.append((start ? QueryParams.WireKey.startName : QueryParams.WireKey.endName, .string(name))) }
        if !inclusive {
            wire.append((start ? QueryParams.WireKey.startInclusive : QueryParams.WireKey.endInclusive, .bool(false)))
        }
    }

    private static func limit(_ parameters: QueryString) throws(RESTError) -> (Int?, QueryParams.LimitAnchor) {
        let first = parameters["limitToFirst"]
        let last = parameters["limitToLast"]
        if first != nil, last != nil { throw .badRequest("limitToFirst and limitToLast cannot both be set") }
        guard let text = first ?? last else { return (nil, .first) }
        let name = first != nil ? "limitToFirst" : "limitToLast"
        guard let limit = Int(text), limit > 0 else {
            throw .badRequest("Query parameter \(name) must be a positive integer")
        }
        // Beyond Int32 no location has that many children: the limit selects everything either way.
        return (min(limit, Int(Int32.max)), first != nil ? .first : .last)
    }
}
