/// Splits a rule expression into tokens (security-rules.md §5.1).
///
/// Whitespace is space, tab, CR and LF (a multi-line expression from the rules file arrives with its raw line breaks).
/// A `/` starts a regular-expression literal only where the parser expects an operand — the JavaScript rule — so the
/// parser tells ``next(regexAllowed:)`` which reading applies. Works on UTF-8 bytes; invalid UTF-8 in a string literal
/// and unknown characters are errors, never traps.
struct ExpressionLexer {
    let bytes: [UInt8]
    var offset = 0

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

    func peek(_ distance: Int) -> UInt8? {
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

    func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

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
}
