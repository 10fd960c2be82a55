/// Reads a rules file: JSON (RFC 8259) plus `//` and `/* */` comments wherever whitespace may appear and raw line
/// breaks inside strings (security-rules.md §1.2) — nothing more. Duplicate keys, trailing commas, single quotes,
/// unquoted keys and other control characters in strings are errors, each with the byte offset where it was found.
///
/// A UTF-8 byte order mark at the very start is skipped (RFC 8259 §8.1 allows parsers to ignore it). Input is
/// hostile: nesting is limited, invalid UTF-8 is rejected, nothing traps.
struct RulesDocumentReader {
    /// A syntax error at a byte offset.
    struct SyntaxError: Error, Sendable {
        var offset: Int
        var message: String
        /// Another offset the message refers to (the first occurrence of a duplicate key).
        var relatedOffset: Int? = nil
        /// The object keys leading to the value being read when the error occurred.
        var keyPath: [String] = []
    }

    private let bytes: [UInt8]
    private let maxNesting: Int
    private var index = 0
    /// Keys of the objects currently being read, outermost first.
    private var keyPath: [String] = []

    /// Parses `bytes` as one rules document.
    static func read(_ bytes: [UInt8], maxNesting: Int) throws(SyntaxError) -> RulesDocumentValue {
        var reader = RulesDocumentReader(bytes: bytes, maxNesting: maxNesting)
        do throws(SyntaxError) {
            return try reader.readDocument()
        } catch {
            var located = error
            located.keyPath = reader.keyPath
            throw located
        }
    }

    private mutating func readDocument() throws(SyntaxError) -> RulesDocumentValue {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        try skipSpace()
        let value = try readValue(nesting: 0)
        try skipSpace()
        guard index == bytes.count else {
            throw SyntaxError(offset: index, message: "unexpected \(describeCurrent()) after the document")
        }
        return value
    }

    private init(bytes: [UInt8], maxNesting: Int) {
        self.bytes = bytes
        self.maxNesting = maxNesting
    }

    // MARK: - Values

    private mutating func readValue(nesting: Int) throws(SyntaxError) -> RulesDocumentValue {
        guard index < bytes.count else { throw SyntaxError(offset: index, message: "unexpected end of file, expected a value") }
        let start = index
        switch bytes[index] {
        case UInt8(ascii: "{"):
            return RulesDocumentValue(kind: .object(try readObject(nesting: nesting + 1)), offset: start)
        case UInt8(ascii: "["):
            return RulesDocumentValue(kind: .array(try readArray(nesting: nesting + 1)), offset: start)
        case UInt8(ascii: "\""):
            return RulesDocumentValue(kind: .string(try readString()), offset: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try skipNumber()
            return RulesDocumentValue(kind: .number, offset: start)
        case UInt8(ascii: "t"):
            try expectWord("true")
            return RulesDocumentValue(kind: .bool(true), offset: start)
        case UInt8(ascii: "f"):
            try expectWord("false")
            return RulesDocumentValue(kind: .bool(false), offset: start)
        case UInt8(ascii: "n"):
            try expectWord("null")
            return RulesDocumentValue(kind: .null, offset: start)
        case UInt8(ascii: "'"):
            throw SyntaxError(offset: start, message: "strings must use double quotes")
        default:
            throw SyntaxError(offset: start, message: "unexpected \(describeCurrent()), expected a value")
        }
    }

    private mutating func readObject(nesting: Int) throws(SyntaxError) -> [RulesDocumentValue.Member] {
        guard nesting <= maxNesting else {
            throw SyntaxError(offset: index, message: "nesting deeper than \(maxNesting) levels")
        }
        index += 1  // {
        var members: [RulesDocumentValue.Member] = []
        var seen: [[UInt8]: Int] = [:]  // by bytes: keys differing only in Unicode normalization are distinct
        try skipSpace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return members
        }
        while true {
            try skipSpace()
            guard index < bytes.count else { throw SyntaxError(offset: index, message: "unexpected end of file in an object") }
            guard bytes[index] == UInt8(ascii: "\"") else {
                if bytes[index] == UInt8(ascii: "}") && !members.isEmpty {
                    throw SyntaxError(offset: index, message: "trailing comma before '}'")
                }
                throw SyntaxError(offset: index, message: "expected a double-quoted key, found \(describeCurrent())")
            }
            let keyOffset = index
            let key = try readString().text
            keyPath.append(key)
            if let first = seen[Array(key.utf8)] {
                throw SyntaxError(
                    offset: keyOffset, message: "duplicate key \"\(key)\"; a rules file may name each key once per object",
                    relatedOffset: first)
            }
            seen[Array(key.utf8)] = keyOffset
            try skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw SyntaxError(offset: index, message: "expected ':' after the key \"\(key)\", found \(describeCurrent())")
            }
            index += 1
            try skipSpace()
            let value = try readValue(nesting: nesting)
            keyPath.removeLast()
            members.append(RulesDocumentValue.Member(key: key, keyOffset: keyOffset, value: value))
            try skipSpace()
            guard index < bytes.count else { throw SyntaxError(offset: index, message: "unexpected end of file in an object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return members
            }
            throw SyntaxError(offset: index, message: "expected ',' or '}' in an object, found \(describeCurrent())")
        }
    }

    private mutating func readArray(nesting: Int) throws(SyntaxError) -> [RulesDocumentValue] {
        guard nesting <= maxNesting else {
            throw SyntaxError(offset: index, message: "nesting deeper than \(maxNesting) levels")
        }
        index += 1  // [
        var elements: [RulesDocumentValue] = []
        try skipSpace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return elements
        }
        while true {
            try skipSpace()
            if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
                throw SyntaxError(offset: index, message: "trailing comma before ']'")
            }
            elements.append(try readValue(nesting: nesting))
            try skipSpace()
            guard index < bytes.count else { throw SyntaxError(offset: index, message: "unexpected end of file in an array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return elements
            }
            throw SyntaxError(offset: index, message: "expected ',' or ']' in an array, found \(describeCurrent())")
        }
    }

    private mutating func expectWord(_ word: StaticString) throws(SyntaxError) {
        let start = index
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for byte in expected {
            guard index < bytes.count, bytes[index] == byte else {
                throw SyntaxError(offset: start, message: "unexpected \(describe(at: start)), expected a value")
            }
            index += 1
        }
        if index < bytes.count, Self.isWordByte(bytes[index]) {
            throw SyntaxError(offset: start, message: "unexpected \(describe(at: start)), expected a value")
        }
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: "$"):
            return true
        default:
            return false
        }
    }

    /// Checks RFC 8259 number syntax; the value itself is never needed (rule values that are numbers are errors).
    private mutating func skipNumber() throws(SyntaxError) {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else {
            throw SyntaxError(offset: start, message: "invalid number")
        }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) {
                throw SyntaxError(offset: start, message: "invalid number: leading zero")
            }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw SyntaxError(offset: start, message: "invalid number: digits expected after '.'")
            }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw SyntaxError(offset: start, message: "invalid number: digits expected in the exponent")
            }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, Self.isWordByte(bytes[index]) || bytes[index] == UInt8(ascii: ".") {
            throw SyntaxError(offset: start, message: "invalid number")
        }
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    // MARK: - Whitespace and comments

    private mutating func skipSpace() throws(SyntaxError) {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                index += 1
            case UInt8(ascii: "/"):
                let start = index
                guard index + 1 < bytes.count else { throw SyntaxError(offset: start, message: "unexpected '/'") }
                if bytes[index + 1] == UInt8(ascii: "/") {
                    index += 2
                    while index < bytes.count, bytes[index] != UInt8(ascii: "\n"), bytes[index] != UInt8(ascii: "\r") {
                        index += 1
                    }
                } else if bytes[index + 1] == UInt8(ascii: "*") {
                    index += 2
                    while true {
                        guard index + 1 < bytes.count else {
                            throw SyntaxError(offset: start, message: "unterminated /* comment")
                        }
                        if bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/") {
                            index += 2
                            break
                        }
                        index += 1
                    }
                } else {
                    throw SyntaxError(offset: start, message: "unexpected '/' (comments start with // or /*)")
                }
            default:
                return
            }
        }
    }

    // MARK: - Strings

    /// Reads a double-quoted string at `index`, keeping the source offset of every decoded byte.
    private mutating func readString() throws(SyntaxError) -> DecodedString {
        let open = index
        index += 1
        var decoded: [UInt8] = []
        var offsets: [Int] = []
        while true {
            guard index < bytes.count else { throw SyntaxError(offset: open, message: "unterminated string") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                offsets.append(index)
                index += 1
                return DecodedString(bytes: decoded, sourceOffsets: offsets)
            case UInt8(ascii: "\\"):
                let escapeStart = index
                let scalar = try readEscape()
                UTF8.encode(scalar) { unit in
                    decoded.append(unit)
                    offsets.append(escapeStart)
                }
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                // A raw line break is part of the string (multi-line expressions, §1.2).
                decoded.append(byte)
                offsets.append(index)
                index += 1
            case 0x00..<0x20, 0x7F:
                throw SyntaxError(
                    offset: index, message: "control character 0x\(hex(byte)) in a string (only line breaks may appear raw)")
            case 0x80...:
                let length = try utf8SequenceLength(at: index)
                for offset in index..<(index + length) {
                    decoded.append(bytes[offset])
                    offsets.append(offset)
                }
                index += length
            default:
                decoded.append(byte)
                offsets.append(index)
                index += 1
            }
        }
    }

    /// Reads one escape sequence starting at the backslash; a `\u` surrogate pair becomes one scalar.
    private mutating func readEscape() throws(SyntaxError) -> Unicode.Scalar {
        let start = index
        index += 1
        guard index < bytes.count else { throw SyntaxError(offset: start, message: "unterminated string") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let first = try readHex4(escapeStart: start)
            if (0xD800..<0xDC00).contains(first) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw SyntaxError(offset: start, message: "unpaired surrogate \\u\(hex16(first))")
                }
                index += 2
                let second = try readHex4(escapeStart: start)
                guard (0xDC00..<0xE000).contains(second) else {
                    throw SyntaxError(offset: start, message: "unpaired surrogate \\u\(hex16(first))")
                }
                let value = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                guard let scalar = Unicode.Scalar(value) else {
                    throw SyntaxError(offset: start, message: "invalid \\u escape")
                }
                return scalar
            }
            guard let scalar = Unicode.Scalar(first) else {
                throw SyntaxError(offset: start, message: "unpaired surrogate \\u\(hex16(first))")
            }
            return scalar
        default:
            throw SyntaxError(
                offset: start,
                message: "invalid escape '\\\(describeByte(byte))' (in a rules file a backslash in an expression is written \\\\)")
        }
    }

    private mutating func readHex4(escapeStart: Int) throws(SyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard index < bytes.count, let digit = hexValue(bytes[index]) else {
                throw SyntaxError(offset: escapeStart, message: "\\u must be followed by four hex digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Length of the well-formed UTF-8 sequence at `offset` (RFC 3629 §4: no overlongs, surrogates or values past
    /// U+10FFFF).
    private func utf8SequenceLength(at offset: Int) throws(SyntaxError) -> Int {
        let lead = bytes[offset]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE, 0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: throw SyntaxError(offset: offset, message: "invalid UTF-8")
        }
        guard offset + length <= bytes.count else { throw SyntaxError(offset: offset, message: "invalid UTF-8") }
        let second = bytes[offset + 1]
        guard second >= low && second <= high else { throw SyntaxError(offset: offset, message: "invalid UTF-8") }
        for position in (offset + 2)..<(offset + length) where bytes[position] & 0xC0 != 0x80 {
            throw SyntaxError(offset: offset, message: "invalid UTF-8")
        }
        return length
    }

    // MARK: - Describing input

    private func describeCurrent() -> String { describe(at: index) }

    private func describe(at offset: Int) -> String {
        guard offset < bytes.count else { return "end of file" }
        return "'\(describeByte(bytes[offset]))'"
    }

    private func describeByte(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return String(UnicodeScalar(byte)) }
        return "0x" + hex(byte)
    }

    private func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
    }

    private func hex16(_ value: UInt32) -> String {
        hex(UInt8(truncatingIfNeeded: value >> 8)) + hex(UInt8(truncatingIfNeeded: value))
    }
}
