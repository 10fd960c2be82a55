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

    let bytes: [UInt8]
    private let maxNesting: Int
    var index = 0
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

    // MARK: - Describing input

    private func describeCurrent() -> String { describe(at: index) }

    private func describe(at offset: Int) -> String {
        guard offset < bytes.count else { return "end of file" }
        return "'\(describeByte(bytes[offset]))'"
    }

    func describeByte(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return String(UnicodeScalar(byte)) }
        return "0x" + hex(byte)
    }

    func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
    }

    func hex16(_ value: UInt32) -> String {
        hex(UInt8(truncatingIfNeeded: value >> 8)) + hex(UInt8(truncatingIfNeeded: value))
    }
}
