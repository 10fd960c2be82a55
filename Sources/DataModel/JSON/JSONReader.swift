/// Strict RFC 8259 JSON reading with limits, straight from bytes.
///
/// - ``readValue(_:maxNesting:maxBytes:)`` builds a generic ``JSONValue`` (protocol envelopes, query objects).
/// - ``readData(_:depth:limits:maxBytes:)`` builds Firebase data directly as a ``WriteValue`` (a ``Node`` plus the
///   server-value placeholders to resolve), applying the input rules of data-model.md §4.3 while parsing.
/// - ``readMembers(_:maxNesting:maxBytes:)`` splits an object into its members' raw byte ranges, so a protocol layer
///   can decode its envelope generically and hand the data member to ``readData(_:depth:limits:maxBytes:)``.
///
/// All errors are ``JSONError`` values with byte offsets; nothing in here traps on input.
public enum JSONReader {
    /// Default nesting limit for generic values: Firebase data (32 levels plus `.value`/`.sv` wrappers) inside a
    /// protocol envelope fits comfortably.
    public static let defaultMaxNesting = 64
    /// Default input size limit: 256 MiB, Firebase's REST write limit (data-model.md §6).
    public static let defaultMaxBytes = 256 * 1024 * 1024

    /// Parses one JSON value.
    ///
    /// - Parameters:
    ///   - bytes: UTF-8 JSON text.
    ///   - maxNesting: most nested arrays/objects allowed.
    ///   - maxBytes: longest input accepted.
    /// - Throws: ``JSONError``.
    public static func readValue(
        _ bytes: UnsafeRawBufferPointer, maxNesting: Int = defaultMaxNesting, maxBytes: Int = defaultMaxBytes
    ) throws(JSONError) -> JSONValue {
        guard bytes.count <= maxBytes else { throw JSONError(offset: maxBytes, reason: .inputTooLarge(limit: maxBytes)) }
        var scanner = JSONScanner(bytes.bindMemory(to: UInt8.self))
        let value = try readValue(&scanner, nesting: 0, maxNesting: maxNesting)
        try scanner.expectEnd()
        return value
    }

    /// Parses one JSON value from an array of bytes (see ``readValue(_:maxNesting:maxBytes:)``).
    public static func readValue(
        _ bytes: [UInt8], maxNesting: Int = defaultMaxNesting, maxBytes: Int = defaultMaxBytes
    ) throws(JSONError) -> JSONValue {
        try withRawBytes(bytes) { raw throws(JSONError) in try readValue(raw, maxNesting: maxNesting, maxBytes: maxBytes) }
    }

    private static func readValue(_ scanner: inout JSONScanner, nesting: Int, maxNesting: Int) throws(JSONError)
        -> JSONValue
    {
        let byte = try scanner.peek()
        switch byte {
        case UInt8(ascii: "\""):
            return .string(try scanner.readString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try scanner.readNumber())
        case UInt8(ascii: "{"):
            guard nesting < maxNesting else { throw scanner.error(.nestingTooDeep(limit: maxNesting)) }
            scanner.index += 1
            var members: [(key: String, value: JSONValue)] = []
            if try scanner.peek() == UInt8(ascii: "}") {
                scanner.index += 1
                return .object(members)
            }
            while true {
                guard try scanner.peek() == UInt8(ascii: "\"") else {
                    throw scanner.error(.unexpectedByte(scanner.base[scanner.index]))
                }
                let key = try scanner.readString()
                try scanner.expect(UInt8(ascii: ":"))
                members.append((key, try readValue(&scanner, nesting: nesting + 1, maxNesting: maxNesting)))
                if try endOfContainer(&scanner, close: UInt8(ascii: "}")) { return .object(members) }
            }
        case UInt8(ascii: "["):
            guard nesting < maxNesting else { throw scanner.error(.nestingTooDeep(limit: maxNesting)) }
            scanner.index += 1
            var elements: [JSONValue] = []
            if try scanner.peek() == UInt8(ascii: "]") {
                scanner.index += 1
                return .array(elements)
            }
            while true {
                elements.append(try readValue(&scanner, nesting: nesting + 1, maxNesting: maxNesting))
                if try endOfContainer(&scanner, close: UInt8(ascii: "]")) { return .array(elements) }
            }
        default:
            switch try scanner.readLiteral() {
            case .some(let flag): return .bool(flag)
            case .none: return .null
            }
        }
    }

    /// After a member or element: consumes `,` (returns false) or the closing bracket (returns true).
    static func endOfContainer(_ scanner: inout JSONScanner, close: UInt8) throws(JSONError) -> Bool {
        let next = try scanner.peek()
        scanner.index += 1
        if next == close { return true }
        guard next == UInt8(ascii: ",") else { throw scanner.error(.unexpectedByte(next), at: scanner.index - 1) }
        return false
    }

    /// Splits a JSON object into its members' keys, where each key starts (its opening quote, for errors about the
    /// key) and the byte ranges of their values (validated, not decoded).
    ///
    /// - Throws: ``JSONError``; `.unexpectedByte` at offset 0 (after whitespace) when the input is not an object.
    public static func readMembers(
        _ bytes: UnsafeRawBufferPointer, maxNesting: Int = defaultMaxNesting, maxBytes: Int = defaultMaxBytes
    ) throws(JSONError) -> [(key: String, keyOffset: Int, range: Range<Int>)] {
        guard bytes.count <= maxBytes else { throw JSONError(offset: maxBytes, reason: .inputTooLarge(limit: maxBytes)) }
        var scanner = JSONScanner(bytes.bindMemory(to: UInt8.self))
        try scanner.expect(UInt8(ascii: "{"))
        var members: [(key: String, keyOffset: Int, range: Range<Int>)] = []
        if try scanner.peek() == UInt8(ascii: "}") {
            scanner.index += 1
            try scanner.expectEnd()
            return members
        }
        while true {
            guard try scanner.peek() == UInt8(ascii: "\"") else {
                throw scanner.error(.unexpectedByte(scanner.base[scanner.index]))
            }
            let keyOffset = scanner.index
            let key = try scanner.readString()
            try scanner.expect(UInt8(ascii: ":"))
            scanner.skipWhitespace()
            let start = scanner.index
            try scanner.skipValue(nesting: 1, maxNesting: maxNesting)
            members.append((key, keyOffset, start..<scanner.index))
            if try endOfContainer(&scanner, close: UInt8(ascii: "}")) { break }
        }
        try scanner.expectEnd()
        return members
    }

    /// Calls `body` with the raw bytes of an array (typed-throws friendly).
    static func withRawBytes<R>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(JSONError) -> R)
        throws(JSONError) -> R
    {
        let result: Result<R, JSONError> = bytes.withUnsafeBytes { raw in
            do throws(JSONError) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
