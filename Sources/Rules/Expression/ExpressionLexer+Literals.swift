extension ExpressionLexer {
    /// Reads `digits [. digits] [exponent]`, `. digits [exponent]` or `0x hex` (JavaScript numeric literals).
    mutating func number() throws(ExpressionError) -> ExpressionToken {
        let start = offset
        if bytes[offset] == UInt8(ascii: "0"), let marker = peek(1), marker | 0x20 == UInt8(ascii: "x") {
            offset += 2
            var value: Double = 0
            var digits = 0
            while offset < bytes.count, let digit = hexDigit(bytes[offset]) {
                value = value * 16 + Double(digit)
                digits += 1
                offset += 1
            }
            guard digits > 0 else { throw ExpressionError(start..<offset, "hexadecimal number without digits") }
            try rejectIdentifierAfterNumber(start: start)
            return ExpressionToken(kind: .number(value), range: start..<offset)
        }
        var text: [UInt8] = []
        let integerStart = offset
        while offset < bytes.count, isDigit(bytes[offset]) {
            text.append(bytes[offset])
            offset += 1
        }
        if offset - integerStart > 1 && bytes[integerStart] == UInt8(ascii: "0") {
            throw ExpressionError(start..<offset, "numbers may not start with 0 (octal literals are not supported)")
        }
        if text.isEmpty { text.append(UInt8(ascii: "0")) }
        text.append(UInt8(ascii: "."))
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            let fractionStart = text.count
            while offset < bytes.count, isDigit(bytes[offset]) {
                text.append(bytes[offset])
                offset += 1
            }
            if text.count == fractionStart { text.append(UInt8(ascii: "0")) }
        } else {
            text.append(UInt8(ascii: "0"))
        }
        if offset < bytes.count, bytes[offset] | 0x20 == UInt8(ascii: "e") {
            text.append(UInt8(ascii: "e"))
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") {
                text.append(bytes[offset])
                offset += 1
            }
            let exponentStart = text.count
            while offset < bytes.count, isDigit(bytes[offset]) {
                text.append(bytes[offset])
                offset += 1
            }
            guard text.count > exponentStart else { throw ExpressionError(start..<offset, "exponent without digits") }
        }
        try rejectIdentifierAfterNumber(start: start)
        guard let value = Double(String(decoding: text, as: UTF8.self)) else {
            throw ExpressionError(start..<offset, "invalid number")
        }
        return ExpressionToken(kind: .number(value), range: start..<offset)
    }

    private func rejectIdentifierAfterNumber(start: Int) throws(ExpressionError) {
        if offset < bytes.count, Self.isIdentifierPart(bytes[offset]) {
            throw ExpressionError(start..<(offset + 1), "an identifier may not directly follow a number")
        }
    }

    private func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    // MARK: - Strings

    /// Reads a single- or double-quoted string literal with JavaScript escapes.
    mutating func string(quote: UInt8) throws(ExpressionError) -> ExpressionToken {
        let start = offset
        offset += 1
        var text: [UInt8] = []
        while true {
            guard offset < bytes.count else { throw ExpressionError(start..<offset, "unterminated string") }
            let byte = bytes[offset]
            if byte == quote {
                offset += 1
                break
            }
            switch byte {
            case UInt8(ascii: "\\"):
                let scalar = try escape()
                UTF8.encode(scalar) { text.append($0) }
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                throw ExpressionError(start..<offset, "unterminated string (a string literal cannot span lines)")
            default:
                text.append(byte)
                offset += 1
            }
        }
        guard let value = String(validating: text, as: UTF8.self) else {
            throw ExpressionError(start..<offset, "string literal is not valid UTF-8")
        }
        return ExpressionToken(kind: .string(value), range: start..<offset)
    }

    /// Reads one escape at the backslash: `\' \" \\ \/ \b \f \n \r \t \v \0 \xHH \uHHHH` (a `\u` surrogate pair is
    /// one character); any other character stands for itself, as in JavaScript.
    private mutating func escape() throws(ExpressionError) -> Unicode.Scalar {
        let start = offset
        offset += 1
        guard offset < bytes.count else { throw ExpressionError(start..<offset, "unterminated string") }
        let byte = bytes[offset]
        offset += 1
        switch byte {
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "v"): return "\u{0B}"
        case UInt8(ascii: "0"):
            if offset < bytes.count, isDigit(bytes[offset]) {
                throw ExpressionError(start..<(offset + 1), "octal escapes are not supported")
            }
            return "\u{00}"
        case UInt8(ascii: "x"):
            let value = try hexEscape(digits: 2, start: start)
            return Unicode.Scalar(UInt8(truncatingIfNeeded: value))
        case UInt8(ascii: "u"):
            let first = try hexEscape(digits: 4, start: start)
            if (0xD800..<0xDC00).contains(first), peek(0) == UInt8(ascii: "\\"), peek(1) == UInt8(ascii: "u") {
                offset += 2
                let second = try hexEscape(digits: 4, start: start)
                if (0xDC00..<0xE000).contains(second),
                    let scalar = Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
                {
                    return scalar
                }
            }
            guard let scalar = Unicode.Scalar(first) else {
                throw ExpressionError(start..<offset, "unpaired surrogate in a \\u escape")
            }
            return scalar
        case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
            throw ExpressionError(start..<offset, "unterminated string (a string literal cannot span lines)")
        case 0x80...:
            // An escaped non-ASCII character stands for itself; let the UTF-8 check of the whole literal judge it.
            offset -= 1
            let end = min(offset + 4, bytes.count)
            var length = 1
            while offset + length < end, bytes[offset + length] & 0xC0 == 0x80 { length += 1 }
            guard let text = String(validating: bytes[offset..<(offset + length)], as: UTF8.self),
                let scalar = text.unicodeScalars.first
            else {
                throw ExpressionError(start..<(offset + length), "string literal is not valid UTF-8")
            }
            offset += length
            return scalar
        default:
            return Unicode.Scalar(byte)
        }
    }

    private mutating func hexEscape(digits: Int, start: Int) throws(ExpressionError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<digits {
            guard offset < bytes.count, let digit = hexDigit(bytes[offset]) else {
                throw ExpressionError(start..<offset, "invalid escape: expected \(digits) hex digits")
            }
            value = value << 4 | UInt32(digit)
            offset += 1
        }
        return value
    }

    // MARK: - Regular expressions

    /// Reads `/pattern/flags`. A `/` inside a character class does not end the pattern (as in JavaScript); the
    /// pattern itself is checked later by ``RegexParser``.
    mutating func regex() throws(ExpressionError) -> ExpressionToken {
        let start = offset
        offset += 1
        var inClass = false
        let patternStart = offset
        while true {
            guard offset < bytes.count else { throw ExpressionError(start..<offset, "unterminated regular expression") }
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                throw ExpressionError(start..<offset, "unterminated regular expression")
            case UInt8(ascii: "\\"):
                offset += 1
                guard offset < bytes.count, bytes[offset] != UInt8(ascii: "\n"), bytes[offset] != UInt8(ascii: "\r") else {
                    throw ExpressionError(start..<offset, "unterminated regular expression")
                }
                offset += 1
                continue
            case UInt8(ascii: "["): inClass = true
            case UInt8(ascii: "]"): inClass = false
            case UInt8(ascii: "/") where !inClass:
                let patternBytes = bytes[patternStart..<offset]
                offset += 1
                let flagsStart = offset
                while offset < bytes.count, Self.isIdentifierPart(bytes[offset]) { offset += 1 }
                guard let pattern = String(validating: patternBytes, as: UTF8.self) else {
                    throw ExpressionError(start..<offset, "regular expression is not valid UTF-8")
                }
                let flags = String(decoding: bytes[flagsStart..<offset], as: UTF8.self)
                return ExpressionToken(kind: .regex(pattern: pattern, flags: flags), range: start..<offset)
            default: break
            }
            offset += 1
        }
    }
}
