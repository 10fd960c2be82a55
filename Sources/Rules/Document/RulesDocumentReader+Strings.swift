import Primitives

extension RulesDocumentReader {
    /// Reads a double-quoted string at `index`, keeping the source offset of every decoded byte.
    mutating func readString() throws(SyntaxError) -> DecodedString {
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

    /// Length of the well-formed UTF-8 sequence at `offset` (``UTF8Validator/sequenceLength(in:at:)``).
    private func utf8SequenceLength(at offset: Int) throws(SyntaxError) -> Int {
        let length = bytes.withUnsafeBufferPointer { UTF8Validator.sequenceLength(in: $0, at: offset) }
        guard let length else { throw SyntaxError(offset: offset, message: "invalid UTF-8") }
        return length
    }
}
