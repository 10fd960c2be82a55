import Primitives
/// The RFC 8259 lexer shared by the JSON readers: whitespace, literals, strings and numbers over raw bytes.
///
/// Hostile input never traps: every read is bounds-checked against `count`, and every failure is a ``JSONError``
/// with the offset of the offending byte. Strings without escapes are copied once (ASCII) or validated once.
struct JSONScanner {
    let base: UnsafePointer<UInt8>
    let count: Int
    /// Offset of the next unread byte.
    var index = 0

    init(_ buffer: UnsafeBufferPointer<UInt8>) {
        // An empty buffer may have a nil base address; point at a static byte instead (count stays 0).
        base = buffer.baseAddress ?? UnsafePointer(JSONScanner.emptyByte)
        count = buffer.count
    }

    nonisolated(unsafe) private static let emptyByte: UnsafeMutablePointer<UInt8> = {
        let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
        pointer.initialize(to: 0)
        return pointer
    }()

    func error(_ reason: JSONError.Reason, at offset: Int? = nil) -> JSONError {
        JSONError(offset: offset ?? index, reason: reason)
    }

    /// Skips RFC 8259 whitespace (space, tab, LF, CR).
    mutating func skipWhitespace() {
        while index < count {
            switch base[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// The next non-whitespace byte without consuming it.
    mutating func peek() throws(JSONError) -> UInt8 {
        skipWhitespace()
        guard index < count else { throw error(.unexpectedEnd) }
        return base[index]
    }

    /// Consumes `byte` (after whitespace) or throws.
    mutating func expect(_ byte: UInt8) throws(JSONError) {
        let next = try peek()
        guard next == byte else { throw error(.unexpectedByte(next)) }
        index += 1
    }

    /// Checks that only whitespace remains.
    mutating func expectEnd() throws(JSONError) {
        skipWhitespace()
        if index < count { throw error(.trailingCharacters) }
    }

    /// Reads `true`, `false` or `null` at the current byte; returns `nil` for null.
    mutating func readLiteral() throws(JSONError) -> Bool? {
        let start = index
        func matches(_ text: StaticString) -> Bool {
            let length = text.utf8CodeUnitCount
            guard start + length <= count else { return false }
            let pointer = text.utf8Start
            for offset in 0..<length where base[start + offset] != pointer[offset] { return false }
            return true
        }
        if matches("true") {
            index += 4
            return true
        }
        if matches("false") {
            index += 5
            return false
        }
        if matches("null") {
            index += 4
            return nil
        }
        if start < count, ["t", "f", "n"].contains(UnicodeScalar(base[start])) {
            // A truncated literal at the end is an unexpected end; anything else an unexpected byte.
            var offset = start + 1
            let literal: StaticString = base[start] == UInt8(ascii: "t") ? "true" : base[start] == UInt8(ascii: "f") ? "false" : "null"
            while offset < count && offset - start < literal.utf8CodeUnitCount
                && base[offset] == literal.utf8Start[offset - start]
            {
                offset += 1
            }
            if offset == count { throw error(.unexpectedEnd, at: offset) }
            throw error(.unexpectedByte(base[offset]), at: offset)
        }
        throw error(.unexpectedByte(base[start]))
    }

    // MARK: - Strings

    /// Reads a string literal starting at the opening quote; returns the text and its UTF-8 byte count.
    mutating func readString() throws(JSONError) -> String {
        let start = index + 1
        var position = start
        var ascii = true
        while position < count {
            let byte = base[position]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(start: base + start, count: position - start)
                index = position + 1
                if ascii { return String(decoding: slice, as: UTF8.self) }
                if let text = String(validating: slice, as: UTF8.self) { return text }
                throw error(.invalidUTF8, at: start + JSONScanner.firstInvalidUTF8Offset(slice))
            }
            if byte == UInt8(ascii: "\\") { return try readEscapedString(from: start) }
            if byte < 0x20 { throw error(.controlCharacterInString, at: position) }
            if byte >= 0x80 { ascii = false }
            position += 1
        }
        throw error(.unexpectedEnd, at: count)
    }

    /// Slow path for strings with escapes: decodes into a byte buffer, then validates.
    private mutating func readEscapedString(from start: Int) throws(JSONError) -> String {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(32)
        var position = start
        while position < count {
            let byte = base[position]
            switch byte {
            case UInt8(ascii: "\""):
                index = position + 1
                if let text = String(validating: decoded, as: UTF8.self) { return text }
                // Escapes are ASCII and decode to valid UTF-8, so the culprit is a raw byte of the input.
                let raw = UnsafeBufferPointer(start: base + start, count: position - start)
                throw error(.invalidUTF8, at: start + JSONScanner.firstInvalidUTF8Offset(raw))
            case UInt8(ascii: "\\"):
                guard position + 1 < count else { throw error(.unexpectedEnd, at: count) }
                let escape = base[position + 1]
                position += 2
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    let escapeStart = position - 2
                    var scalar = try readHex4(at: position)
                    position += 4
                    if scalar >= 0xD800 && scalar <= 0xDBFF {
                        guard position + 6 <= count, base[position] == UInt8(ascii: "\\"),
                            base[position + 1] == UInt8(ascii: "u")
                        else { throw error(.unpairedSurrogate, at: escapeStart) }
                        let low = try readHex4(at: position + 2)
                        guard low >= 0xDC00 && low <= 0xDFFF else { throw error(.unpairedSurrogate, at: escapeStart) }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        position += 6
                    } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                        throw error(.unpairedSurrogate, at: escapeStart)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw error(.unpairedSurrogate, at: escapeStart) }
                    decoded.append(contentsOf: UTF8.encode(unicode).map { Array($0) } ?? [])
                default:
                    throw error(.invalidEscape, at: position - 2)
                }
            default:
                if byte < 0x20 { throw error(.controlCharacterInString, at: position) }
                decoded.append(byte)
                position += 1
            }
        }
        throw error(.unexpectedEnd, at: count)
    }

    private func readHex4(at offset: Int) throws(JSONError) -> UInt32 {
        guard offset + 4 <= count else { throw error(.unexpectedEnd, at: count) }
        var value: UInt32 = 0
        for position in offset..<(offset + 4) {
            let byte = base[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(.invalidEscape, at: position)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// Offset of the first byte that breaks UTF-8 well-formedness, or `bytes.count`.
    static func firstInvalidUTF8Offset(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        UTF8Validator.firstInvalidOffset(bytes)
    }

    // MARK: - Numbers

    /// Reads an RFC 8259 number; rejects values that overflow a double; returns `-0` as `0`.
    mutating func readNumber() throws(JSONError) -> Double {
        let start = index
        var position = index
        var negative = false
        if position < count && base[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        var mantissa: UInt64 = 0
        var significantDigits = 0
        var exponent = 0
        var exact = true
        guard position < count else { throw error(.unexpectedEnd, at: position) }
        if base[position] == UInt8(ascii: "0") {
            position += 1
        } else if base[position] &- UInt8(ascii: "1") < 9 {
            while position < count, base[position] &- UInt8(ascii: "0") < 10 {
                accumulate(base[position], &mantissa, &significantDigits, &exponent, &exact, fraction: false)
                position += 1
            }
        } else {
            throw error(.invalidNumber, at: position)
        }
        if position < count && base[position] == UInt8(ascii: ".") {
            position += 1
            guard position < count else { throw error(.unexpectedEnd, at: position) }
            guard base[position] &- UInt8(ascii: "0") < 10 else { throw error(.invalidNumber, at: position) }
            while position < count, base[position] &- UInt8(ascii: "0") < 10 {
                accumulate(base[position], &mantissa, &significantDigits, &exponent, &exact, fraction: true)
                position += 1
            }
        }
        if position < count && (base[position] == UInt8(ascii: "e") || base[position] == UInt8(ascii: "E")) {
            position += 1
            var exponentNegative = false
            if position < count && (base[position] == UInt8(ascii: "+") || base[position] == UInt8(ascii: "-")) {
                exponentNegative = base[position] == UInt8(ascii: "-")
                position += 1
            }
            guard position < count else { throw error(.unexpectedEnd, at: position) }
            guard base[position] &- UInt8(ascii: "0") < 10 else { throw error(.invalidNumber, at: position) }
            var explicit = 0
            while position < count, base[position] &- UInt8(ascii: "0") < 10 {
                if explicit < 100_000 { explicit = explicit * 10 + Int(base[position] - UInt8(ascii: "0")) }
                position += 1
            }
            exponent += exponentNegative ? -explicit : explicit
        }
        index = position
        var value: Double
        if exact && significantDigits <= 15 && exponent >= -22 && exponent <= 22 {
            // Clinger's fast path: both the mantissa and 10^|e| are exact doubles, so one rounding.
            value = Double(mantissa)
            if exponent < 0 { value /= JSONScanner.powersOfTen[-exponent] } else { value *= JSONScanner.powersOfTen[exponent] }
            if negative { value = -value }
        } else {
            let text = String(decoding: UnsafeBufferPointer(start: base + start, count: position - start), as: UTF8.self)
            guard let parsed = Double(text) else { throw error(.invalidNumber, at: start) }
            value = parsed
        }
        guard value.isFinite else { throw error(.numberOutOfRange, at: start) }
        return value == 0 ? 0 : value
    }

    private func accumulate(
        _ byte: UInt8, _ mantissa: inout UInt64, _ digits: inout Int, _ exponent: inout Int, _ exact: inout Bool,
        fraction: Bool
    ) {
        let digit = UInt64(byte - UInt8(ascii: "0"))
        if digits == 0 && digit == 0 {
            if fraction { exponent -= 1 }
            return
        }
        if digits < 19 {
            mantissa = mantissa * 10 + digit
            digits += 1
            if fraction { exponent -= 1 }
        } else {
            if digit != 0 { exact = false }
            if !fraction { exponent += 1 }
            digits += 1
        }
    }

    private static let powersOfTen: [Double] = (0...22).map { power in
        var value = 1.0
        for _ in 0..<power { value *= 10 }
        return value
    }

    // MARK: - Skipping

    /// Skips one value of any kind (used to locate raw member ranges), checking syntax and nesting.
    mutating func skipValue(nesting: Int, maxNesting: Int) throws(JSONError) {
        let byte = try peek()
        switch byte {
        case UInt8(ascii: "\""):
            _ = try readString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard nesting < maxNesting else { throw error(.nestingTooDeep(limit: maxNesting)) }
            let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            index += 1
            if try peek() == close {
                index += 1
                return
            }
            while true {
                if byte == UInt8(ascii: "{") {
                    guard try peek() == UInt8(ascii: "\"") else { throw error(.unexpectedByte(base[index])) }
                    _ = try readString()
                    try expect(UInt8(ascii: ":"))
                }
                try skipValue(nesting: nesting + 1, maxNesting: maxNesting)
                let next = try peek()
                index += 1
                if next == close { return }
                guard next == UInt8(ascii: ",") else { throw error(.unexpectedByte(next), at: index - 1) }
            }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            _ = try readNumber()
        default:
            _ = try readLiteral()
        }
    }
}
