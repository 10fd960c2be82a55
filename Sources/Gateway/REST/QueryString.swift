import Primitives

/// The parameters of a request's query string, percent-decoded (`+` stays a plus, RFC 3986; rest-api.md §3).
///
/// A parameter given twice keeps its last value. Names and values that are not valid UTF-8 after decoding are
/// kept with replacement characters, so they fail validation with a precise message rather than vanish.
struct QueryString: Sendable {
    private var values: [String: String] = [:]

    init(_ query: String?) {
        guard let query else { return }
        for pair in query.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            let name = PercentDecoding.decode(pair[..<(equals ?? pair.endIndex)])
            let value = equals.map { PercentDecoding.decode(pair[pair.index(after: $0)...]) } ?? ""
            values[name] = value
        }
    }

    subscript(name: String) -> String? {
        values[name]
    }

    /// Whether any of `names` is present.
    func containsAny(_ names: [String]) -> Bool {
        names.contains { values[$0] != nil }
    }
}
