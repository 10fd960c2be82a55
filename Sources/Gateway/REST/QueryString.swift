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
            let name = Self.decode(pair[..<(equals ?? pair.endIndex)])
            let value = equals.map { Self.decode(pair[pair.index(after: $0)...]) } ?? ""
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

    /// Percent-decodes `bytes`; a `%` not followed by two hex digits is kept as is.
    static func decode(_ bytes: Substring.UTF8View.SubSequence) -> String {
        decode(Array(bytes))
    }

    /// Percent-decodes `bytes`; a `%` not followed by two hex digits is kept as is.
    static func decode(_ bytes: [UInt8]) -> String {
        guard bytes.contains(UInt8(ascii: "%")) else { return String(decoding: bytes, as: UTF8.self) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            {
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
