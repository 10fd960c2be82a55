/// Helpers for HTTP list-valued header fields (RFC 9110 §5.6.1: `#element` lists separated by commas, with optional
/// whitespace), shared by the server and client handshakes.
package enum HTTPFieldList {
    /// The non-empty, whitespace-trimmed elements of every line of a comma-separated field.
    package static func elements(of lines: [String]) -> [Substring] {
        var result: [Substring] = []
        for line in lines {
            for element in line.split(separator: ",", omittingEmptySubsequences: true) {
                let trimmed = trimmingWhitespace(element)
                if !trimmed.isEmpty { result.append(trimmed) }
            }
        }
        return result
    }

    /// Whether any element equals `token`, ignoring ASCII case (RFC 9110 §7.8 and §7.6.1 tokens are
    /// case-insensitive).
    static func contains(_ token: String, in lines: [String]) -> Bool {
        elements(of: lines).contains { equalsIgnoringASCIICase($0, token) }
    }

    /// `value` without leading and trailing spaces and tabs.
    package static func trimmingWhitespace(_ value: Substring) -> Substring {
        var value = value
        while let first = value.first, first == " " || first == "\t" { value.removeFirst() }
        while let last = value.last, last == " " || last == "\t" { value.removeLast() }
        return value
    }

    /// ASCII case-insensitive comparison.
    static func equalsIgnoringASCIICase(_ lhs: some StringProtocol, _ rhs: some StringProtocol) -> Bool {
        let left = lhs.utf8
        let right = rhs.utf8
        guard left.count == right.count else { return false }
        return zip(left, right).allSatisfy { lowercasedASCII($0) == lowercasedASCII($1) }
    }

    /// `value` with ASCII letters lowercased (other characters untouched).
    static func lowercasedASCII(_ value: some StringProtocol) -> String {
        String(decoding: value.utf8.map(lowercasedASCII), as: UTF8.self)
    }

    private static func lowercasedASCII(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }
}
