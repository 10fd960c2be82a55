/// One lexical token of a rule expression (security-rules.md §5.1) with its byte range.
struct ExpressionToken: Sendable, Equatable {
    /// Operators and punctuation of the rules language.
    enum Symbol: String, Sendable, Equatable {
        case dot = ".", openBracket = "[", closeBracket = "]", openParen = "(", closeParen = ")", comma = ","
        case question = "?", colon = ":", not = "!", minus = "-", plus = "+", times = "*", divide = "/"
        case remainder = "%", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
        case equal = "==", identical = "===", notEqual = "!=", notIdentical = "!==", and = "&&", or = "||"
    }

    /// What the token is.
    enum Kind: Sendable, Equatable {
        case number(Double)
        case string(String)
        case identifier(String)
        /// A regular-expression literal: the pattern between the slashes and the flags after them.
        case regex(pattern: String, flags: String)
        case symbol(Symbol)
        /// A JavaScript operator or punctuation the rules language does not have (`=`, `**`, `&`, `;`, `{`, …),
        /// kept as a token so the parser can name it in its error.
        case unsupported(String)
        case end
    }

    var kind: Kind
    var range: Range<Int>

    /// Whether this is the symbol `symbol`.
    func isSymbol(_ symbol: Symbol) -> Bool {
        if case .symbol(let own) = kind { return own == symbol }
        return false
    }

    /// The token as a rules author wrote it, for error messages.
    var description: String {
        switch kind {
        case .number: return "number"
        case .string: return "string"
        case .identifier(let name): return "'\(name)'"
        case .regex: return "regular expression"
        case .symbol(let symbol): return "'\(symbol.rawValue)'"
        case .unsupported(let text): return "'\(text)'"
        case .end: return "end of expression"
        }
    }
}
