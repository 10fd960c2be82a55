/// Recursive-descent parser for rule expressions (security-rules.md §5.1–§5.2), precedence low to high:
/// `?:` (right-associative), `||`, `&&`, `== === != !==`, `< <= > >=`, `+ -`, `* / %`, prefix `! -`, then member
/// access, subscripts and calls.
///
/// Input is hostile: nesting (parentheses, prefix operators, conditionals) and the height of the resulting tree are
/// limited by `maxDepth`, so neither this parser nor the checker and evaluator that recurse over the tree can
/// exhaust the stack. `==`/`===` and `!=`/`!==` are the same operators in rules and parse to one node kind each.
struct ExpressionParser {
    private var lexer: ExpressionLexer
    private var current: ExpressionToken
    private let maxDepth: Int
    private var depth = 0

    /// Parses one whole expression.
    static func parse(_ bytes: [UInt8], maxDepth: Int) throws(ExpressionError) -> ExpressionSyntax {
        var lexer = ExpressionLexer(bytes)
        let first = try lexer.next(regexAllowed: true)
        var parser = ExpressionParser(lexer: lexer, current: first, maxDepth: maxDepth)
        if case .end = first.kind { throw ExpressionError(first.range, "empty expression") }
        let syntax = try parser.parseConditional()
        switch parser.current.kind {
        case .end:
            return syntax
        case .unsupported(";"):
            throw ExpressionError(parser.current.range, "';' is not allowed: a rule is a single expression")
        case .unsupported:
            throw parser.unsupportedError(parser.current)
        default:
            throw ExpressionError(parser.current.range, "expected end of expression, found \(parser.current.description)")
        }
    }

    private init(lexer: ExpressionLexer, current: ExpressionToken, maxDepth: Int) {
        self.lexer = lexer
        self.current = current
        self.maxDepth = maxDepth
    }

    /// Consumes the current token. After a token that ends an operand the next `/` is division, otherwise it
    /// starts a regular expression.
    private mutating func advance() throws(ExpressionError) {
        let endsOperand: Bool
        switch current.kind {
        case .number, .string, .identifier, .regex: endsOperand = true
        case .symbol(let symbol): endsOperand = symbol == .closeParen || symbol == .closeBracket
        case .unsupported, .end: endsOperand = false
        }
        current = try lexer.next(regexAllowed: !endsOperand)
    }

    private mutating func expect(_ symbol: ExpressionToken.Symbol, _ context: String) throws(ExpressionError) {
        guard current.isSymbol(symbol) else {
            if case .unsupported = current.kind { throw unsupportedError(current) }
            throw ExpressionError(current.range, "expected '\(symbol.rawValue)' \(context), found \(current.description)")
        }
        try advance()
    }

    private mutating func enter(_ range: Range<Int>) throws(ExpressionError) {
        depth += 1
        guard depth <= maxDepth else { throw ExpressionError(range, "expression nested more than \(maxDepth) levels deep") }
    }

    private func make(_ kind: ExpressionSyntax.Kind, _ range: Range<Int>, children: [ExpressionSyntax])
        throws(ExpressionError) -> ExpressionSyntax
    {
        let height = (children.map(\.height).max() ?? 0) + 1
        guard height <= maxDepth else {
            throw ExpressionError(range, "expression nested more than \(maxDepth) levels deep")
        }
        return ExpressionSyntax(kind: kind, range: range, height: height)
    }

    // MARK: - Operators

    private mutating func parseConditional() throws(ExpressionError) -> ExpressionSyntax {
        let condition = try parseBinary(minimumPrecedence: 1)
        guard current.isSymbol(.question) else { return condition }
        try enter(current.range)
        defer { depth -= 1 }
        try advance()
        let then = try parseConditional()
        try expect(.colon, "in a conditional expression")
        let otherwise = try parseConditional()
        return try make(
            .conditional(condition, then, otherwise), condition.range.lowerBound..<otherwise.range.upperBound,
            children: [condition, then, otherwise])
    }

    private enum BinaryParse {
        case binary(ExpressionSyntax.BinaryOperator)
        case logical(ExpressionSyntax.LogicalOperator)
    }

    /// The operator at the current token and its precedence (1 = `||` … 6 = multiplicative), or `nil`.
    private func binaryOperator() -> (BinaryParse, Int)? {
        guard case .symbol(let symbol) = current.kind else { return nil }
        switch symbol {
        case .or: return (.logical(.or), 1)
        case .and: return (.logical(.and), 2)
        case .equal, .identical: return (.binary(.equal), 3)
        case .notEqual, .notIdentical: return (.binary(.notEqual), 3)
        case .less: return (.binary(.less), 4)
        case .lessOrEqual: return (.binary(.lessOrEqual), 4)
        case .greater: return (.binary(.greater), 4)
        case .greaterOrEqual: return (.binary(.greaterOrEqual), 4)
        case .plus: return (.binary(.add), 5)
        case .minus: return (.binary(.subtract), 5)
        case .times: return (.binary(.multiply), 6)
        case .divide: return (.binary(.divide), 6)
        case .remainder: return (.binary(.remainder), 6)
        default: return nil
        }
    }

    private mutating func parseBinary(minimumPrecedence: Int) throws(ExpressionError) -> ExpressionSyntax {
        var left = try parseUnary()
        while true {
            if case .identifier(let word) = current.kind, word == "in" || word == "instanceof" {
                throw ExpressionError(current.range, "'\(word)' is not supported in rules")
            }
            if case .unsupported = current.kind { throw unsupportedError(current) }
            guard let (parsed, precedence) = binaryOperator(), precedence >= minimumPrecedence else { return left }
            try advance()
            let right = try parseBinary(minimumPrecedence: precedence + 1)
            let range = left.range.lowerBound..<right.range.upperBound
            switch parsed {
            case .binary(let op):
                left = try make(.binary(op, left, right), range, children: [left, right])
            case .logical(let op):
                if case .logical(let leftOp, var operands) = left.kind, leftOp == op {
                    operands.append(right)
                    left = try make(.logical(op, operands), range, children: operands)
                } else {
                    left = try make(.logical(op, [left, right]), range, children: [left, right])
                }
            }
        }
    }

    private mutating func parseUnary() throws(ExpressionError) -> ExpressionSyntax {
        let start = current.range.lowerBound
        let op: ExpressionSyntax.UnaryOperator
        switch current.kind {
        case .symbol(.not): op = .not
        case .symbol(.minus): op = .negate
        case .symbol(.plus): throw ExpressionError(current.range, "unary '+' is not supported in rules")
        default: return try parsePostfix()
        }
        try enter(current.range)
        defer { depth -= 1 }
        try advance()
        let operand = try parseUnary()
        return try make(.unary(op, operand), start..<operand.range.upperBound, children: [operand])
    }

    // MARK: - Postfix and primary

    private mutating func parsePostfix() throws(ExpressionError) -> ExpressionSyntax {
        var syntax = try parsePrimary()
        while true {
            let start = syntax.range.lowerBound
            switch current.kind {
            case .symbol(.dot):
                try advance()
                guard case .identifier(let name) = current.kind else {
                    throw ExpressionError(current.range, "expected a name after '.', found \(current.description)")
                }
                let nameRange = current.range
                try advance()
                syntax = try make(
                    .member(syntax, name: name, nameRange: nameRange), start..<nameRange.upperBound, children: [syntax])
            case .symbol(.openBracket):
                try enter(current.range)
                try advance()
                let index = try parseConditional()
                let end = current.range.upperBound
                try expect(.closeBracket, "after a subscript")
                depth -= 1
                syntax = try make(.subscripted(syntax, index: index), start..<end, children: [syntax, index])
            case .symbol(.openParen):
                try enter(current.range)
                try advance()
                let arguments = try parseList(closing: .closeParen, context: "in an argument list")
                let end = previousEnd
                depth -= 1
                syntax = try make(.call(syntax, arguments: arguments), start..<end, children: [syntax] + arguments)
            default:
                return syntax
            }
        }
    }

    /// End offset of the closing token of the list parsed last.
    private var previousEnd = 0

    /// Parses `expr {, expr}` up to and including `closing` (the opening token is already consumed).
    private mutating func parseList(closing: ExpressionToken.Symbol, context: String) throws(ExpressionError)
        -> [ExpressionSyntax]
    {
        var elements: [ExpressionSyntax] = []
        if current.isSymbol(closing) {
            previousEnd = current.range.upperBound
            try advance()
            return elements
        }
        while true {
            elements.append(try parseConditional())
            if current.isSymbol(.comma) {
                try advance()
                if current.isSymbol(closing) {
                    throw ExpressionError(current.range, "trailing ',' \(context)")
                }
                continue
            }
            previousEnd = current.range.upperBound
            try expect(closing, context)
            return elements
        }
    }

    private static let unsupportedWords: Set<String> = [
        "typeof", "instanceof", "in", "new", "delete", "void", "this", "function", "var", "let", "const", "return",
        "class", "yield", "await", "async", "if", "else", "for", "while", "do", "switch", "case", "throw", "try",
    ]

    private mutating func parsePrimary() throws(ExpressionError) -> ExpressionSyntax {
        let token = current
        switch token.kind {
        case .number(let value):
            try advance()
            return try make(.literal(.number(value)), token.range, children: [])
        case .string(let text):
            try advance()
            return try make(.literal(.string(text)), token.range, children: [])
        case .regex(let pattern, let flags):
            try advance()
            return try make(.regex(pattern: pattern, flags: flags), token.range, children: [])
        case .identifier(let name):
            if Self.unsupportedWords.contains(name) {
                throw ExpressionError(token.range, "'\(name)' is not supported in rules")
            }
            try advance()
            switch name {
            case "true": return try make(.literal(.bool(true)), token.range, children: [])
            case "false": return try make(.literal(.bool(false)), token.range, children: [])
            case "null": return try make(.literal(.null), token.range, children: [])
            default: return try make(.identifier(name), token.range, children: [])
            }
        case .symbol(.openParen):
            try enter(token.range)
            try advance()
            let inner = try parseConditional()
            let end = current.range.upperBound
            try expect(.closeParen, "to close '('")
            depth -= 1
            return ExpressionSyntax(kind: inner.kind, range: token.range.lowerBound..<end, height: inner.height)
        case .symbol(.openBracket):
            try enter(token.range)
            try advance()
            let elements = try parseList(closing: .closeBracket, context: "in an array")
            depth -= 1
            return try make(.array(elements), token.range.lowerBound..<previousEnd, children: elements)
        case .unsupported:
            throw unsupportedError(token)
        case .end:
            throw ExpressionError(token.range, "unexpected end of expression")
        case .symbol:
            throw ExpressionError(token.range, "unexpected \(token.description)")
        }
    }

    private func unsupportedError(_ token: ExpressionToken) -> ExpressionError {
        guard case .unsupported(let text) = token.kind else {
            return ExpressionError(token.range, "unexpected \(token.description)")
        }
        switch text {
        case "=": return ExpressionError(token.range, "assignment is not allowed in rules (compare with '==')")
        case "{", "}": return ExpressionError(token.range, "object literals and blocks are not supported in rules")
        case ";": return ExpressionError(token.range, "';' is not allowed: a rule is a single expression")
        case "=>": return ExpressionError(token.range, "functions are not supported in rules")
        default: return ExpressionError(token.range, "operator '\(text)' is not supported in rules")
        }
    }
}
