/// Splits a rule expression into tokens (security-rules.md §5.1).
///
/// Whitespace is space, tab, CR and LF (a multi-line expression from the rules file arrives with its raw line breaks).
/// A `/` starts a regular-expression literal only where the parser expects an operand — the JavaScript rule — so the
/// parser tells ``next(regexAllowed:)`` which reading applies. Works on UTF-8 bytes; invalid UTF-8 in a string literal
/// and unknown characters are errors, never traps.
struct ExpressionLexer {
    private let bytes: [UInt8]
    private(set) var offset = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The next token; at the end of the text an `.end` token (repeatedly).
    mutating func next(regexAllowed: Bool) throws(ExpressionError) -> ExpressionToken {
        skipWhitespace()
        let start = offset
        guard offset < bytes.count else { return ExpressionToken(kind: .end, range: start..<start) }
        let byte = bytes[offset]
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try number()
        case UInt8(ascii: "."):
            if offset + 1 < bytes.count, isDigit(bytes[offset + 1]) { return try number() }
            return symbol(.dot, length: 1)
        case UInt8(ascii: "'"), UInt8(ascii: "\""):
            return try string(quote: byte)
        case UInt8(ascii: "/"):
            if regexAllowed { return try regex() }
            if peek(1) == UInt8(ascii: "=") { return unsupported(length: 2) }
            return symbol(.divide, length: 1)
        case _ where Self.isIdentifierStart(byte):
            offset += 1
            while offset < bytes.count, Self.isIdentifierPart(bytes[offset]) { offset += 1 }
            return ExpressionToken(kind: .identifier(String(decoding: bytes[start..<offset], as: UTF8.self)), range: start..<offset)
        default:
            return try punctuation(byte)
        }
    }

    private func peek(_ distance: Int) -> UInt8? {
        offset + distance < bytes.count ? bytes[offset + distance] : nil
    }

    private mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): offset += 1
            default: return
            }
        }
    }

    static func isIdentifierStart(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"), UInt8(ascii: "$"):
            return true
        default:
            return false
        }
    }

    static func isIdentifierPart(_ byte: UInt8) -> Bool {
        isIdentifierStart(byte) || byte &- UInt8(ascii: "0") < 10
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    private mutating func symbol(_ symbol: ExpressionToken.Symbol, length: Int) -> ExpressionToken {
        let start = offset
        offset += length
        return ExpressionToken(kind: .symbol(symbol), range: start..<offset)
    }

    private mutating func unsupported(length: Int) -> ExpressionToken {
        let start = offset
        offset += length
        return ExpressionToken(kind: .unsupported(String(decoding: bytes[start..<offset], as: UTF8.self)), range: start..<offset)
    }

    // MARK: - Punctuation

    private mutating func punctuation(_ byte: UInt8) throws(ExpressionError) -> ExpressionToken {
        let next = peek(1)
        let afterNext = peek(2)
        switch byte {
        case UInt8(ascii: "["): return symbol(.openBracket, length: 1)
        case UInt8(ascii: "]"): return symbol(.closeBracket, length: 1)
        case UInt8(ascii: "("): return symbol(.openParen, length: 1)
        case UInt8(ascii: ")"): return symbol(.closeParen, length: 1)
        case UInt8(ascii: ","): return symbol(.comma, length: 1)
        case UInt8(ascii: ":"): return symbol(.colon, length: 1)
        case UInt8(ascii: "?"):
            if next == UInt8(ascii: "?") || next == UInt8(ascii: ".") { return unsupported(length: 2) }
            return symbol(.question, length: 1)
        case UInt8(ascii: "!"):
            if next == UInt8(ascii: "=") {
                return afterNext == UInt8(ascii: "=") ? symbol(.notIdentical, length: 3) : symbol(.notEqual, length: 2)
            }
            return symbol(.not, length: 1)
        case UInt8(ascii: "="):
            if next == UInt8(ascii: "=") {
                return afterNext == UInt8(ascii: "=") ? symbol(.identical, length: 3) : symbol(.equal, length: 2)
            }
            return unsupported(length: next == UInt8(ascii: ">") ? 2 : 1)
        case UInt8(ascii: "<"):
            if next == UInt8(ascii: "<") { return unsupported(length: afterNext == UInt8(ascii: "=") ? 3 : 2) }
            return next == UInt8(ascii: "=") ? symbol(.lessOrEqual, length: 2) : symbol(.less, length: 1)
        case UInt8(ascii: ">"):
            if next == UInt8(ascii: ">") {
                return unsupported(length: afterNext == UInt8(ascii: ">") ? 3 : 2)
            }
            return next == UInt8(ascii: "=") ? symbol(.greaterOrEqual, length: 2) : symbol(.greater, length: 1)
        case UInt8(ascii: "&"):
            return next == UInt8(ascii: "&") ? symbol(.and, length: 2) : unsupported(length: 1)
        case UInt8(ascii: "|"):
            return next == UInt8(ascii: "|") ? symbol(.or, length: 2) : unsupported(length: 1)
        case UInt8(ascii: "+"):
            if next == UInt8(ascii: "+") || next == UInt8(ascii: "=") { return unsupported(length: 2) }
            return symbol(.plus, length: 1)
        case UInt8(ascii: "-"):
            if next == UInt8(ascii: "-") || next == UInt8(ascii: "=") { return unsupported(length: 2) }
            return symbol(.minus, length: 1)
        case UInt8(ascii: "*"):
            if next == UInt8(ascii: "*") || next == UInt8(ascii: "=") { return unsupported(length: 2) }
            return symbol(.times, length: 1)
        case UInt8(ascii: "%"):
            if next == UInt8(ascii: "=") { return unsupported(length: 2) }
            return symbol(.remainder, length: 1)
        case UInt8(ascii: "^"), UInt8(ascii: "~"), UInt8(ascii: ";"), UInt8(ascii: "{"), UInt8(ascii: "}"),
            UInt8(ascii: "`"), UInt8(ascii: "@"), UInt8(ascii: "#"), UInt8(ascii: "\\"):
            return unsupported(length: 1)
        default:
            let range = offset..<(offset + 1)
            if byte >= 0x21 && byte < 0x7F {
                throw ExpressionError(range, "unexpected character '\(String(UnicodeScalar(byte)))'")
            }
            throw ExpressionError(range, "unexpected character (byte 0x\(String(byte, radix: 16, uppercase: true)))")
        }
    }

    // MARK: - Numbers

    /// Reads `digits [. digits] [exponent]`, `. digits [exponent]` or `0x hex` (JavaScript numeric literals).
    private mutating func number() throws(ExpressionError) -> ExpressionToken {
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
    private mutating func string(quote: UInt8) throws(ExpressionError) -> ExpressionToken {
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
    private mutating func regex() throws(ExpressionError) -> ExpressionToken {
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
