import Testing

@testable import Rules

@Suite("Expression lexer and parser")
struct ExpressionParserTests {
    private func parse(_ text: String, maxDepth: Int = 100) throws(ExpressionError) -> ExpressionSyntax {
        try ExpressionParser.parse(Array(text.utf8), maxDepth: maxDepth)
    }

    private func failure(_ text: String, maxDepth: Int = 100) -> ExpressionError? {
        do {
            _ = try parse(text, maxDepth: maxDepth)
            return nil
        } catch {
            return error
        }
    }

    @Test(
        "syntax errors name the offending bytes",
        arguments: [
            ("1 +", 3..<3, "unexpected end of expression"),
            ("(1", 2..<2, "expected ')'"),
            ("a.", 2..<2, "expected a name after '.'"),
            ("a.5", 1..<3, "expected end of expression"),
            ("f(1,)", 4..<5, "trailing ','"),
            ("'abc", 0..<4, "unterminated string"),
            ("'ab\ncd'", 0..<3, "cannot span lines"),
            ("x.matches(/abc", 10..<14, "unterminated regular expression"),
            ("x.matches(/a\nb/)", 10..<12, "unterminated regular expression"),
            ("1 ** 2", 2..<4, "operator '**' is not supported"),
            ("a = 1", 2..<3, "assignment is not allowed"),
            ("a; b", 1..<2, "a rule is a single expression"),
            ("{}", 0..<1, "object literals"),
            ("typeof x", 0..<6, "'typeof' is not supported"),
            ("x in y", 2..<4, "'in' is not supported"),
            ("+1", 0..<1, "unary '+' is not supported"),
            ("01", 0..<2, "may not start with 0"),
            ("3in", 0..<2, "identifier may not directly follow a number"),
            ("0x", 0..<2, "without digits"),
            ("1e+", 0..<3, "exponent without digits"),
            ("'\\u12'", 1..<5, "4 hex digits"),
            ("'\\uD800'", 1..<7, "unpaired surrogate"),
            ("'\\07'", 1..<4, "octal escapes"),
            ("a ? b", 5..<5, "expected ':'"),
            ("a @ b", 2..<3, "operator '@' is not supported"),
            ("a € b", 2..<3, "unexpected character"),
            ("", 0..<0, "empty expression"),
            ("   ", 3..<3, "empty expression"),
            (")", 0..<1, "unexpected ')'"),
            ("[1, 2", 5..<5, "expected ']'"),
            ("a ?? b", 2..<4, "operator '??' is not supported"),
            ("a?.b", 1..<3, "operator '?.' is not supported"),
        ] as [(String, Range<Int>, String)])
    func syntaxErrors(text: String, range: Range<Int>, message: String) throws {
        let error = try #require(failure(text))
        #expect(error.range == range, "\(error)")
        #expect(error.message.contains(message), "\(error)")
    }

    @Test("invalid UTF-8 in a string literal is an error, not a trap")
    func invalidUTF8() throws {
        for bytes: [UInt8] in [[0x27, 0xFF, 0x27], [0x27, 0xC3, 0x27], [0x27, 0xED, 0xA0, 0x80, 0x27], [0x27, 0x5C, 0xC3, 0x27], [0xC3, 0xA9]] {
            #expect(throws: ExpressionError.self) { try ExpressionParser.parse(bytes, maxDepth: 100) }
        }
    }

    @Test("a regular-expression literal is read only where an operand may start")
    func regexOrDivision() throws {
        guard case .binary(.divide, _, _) = try parse("a / b / c").kind else {
            Issue.record("not a division")
            return
        }
        guard case .call(_, let arguments) = try parse("x.matches(/a/i)").kind, case .regex("a", "i") = arguments.first?.kind else {
            Issue.record("not a regex argument")
            return
        }
        guard case .binary(.divide, _, let right) = try parse("(a) / (b)").kind, case .identifier("b") = right.kind else {
            Issue.record("not a division after ')'")
            return
        }
    }

    @Test("&& and || chains are flattened, keeping the tree shallow")
    func flattening() throws {
        let chain = Array(repeating: "a", count: 5000).joined(separator: " && ")
        let syntax = try parse(chain)
        guard case .logical(.and, let operands) = syntax.kind else {
            Issue.record("not a logical node")
            return
        }
        #expect(operands.count == 5000)
        #expect(syntax.height == 2)
    }

    @Test(
        "hostile nesting is refused instead of exhausting the stack",
        arguments: [
            String(repeating: "(", count: 5000) + "1" + String(repeating: ")", count: 5000),
            String(repeating: "!", count: 100_000) + "a",
            String(repeating: "- ", count: 100_000) + "1",
            Array(repeating: "1", count: 5000).joined(separator: " + "),
            "a" + String(repeating: ".b", count: 5000),
            "a" + String(repeating: "[0]", count: 5000),
            String(repeating: "a ? ", count: 5000) + "b" + String(repeating: " : c", count: 5000),
            String(repeating: "f(", count: 5000) + String(repeating: ")", count: 5000),
            String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000),
        ])
    func deepNesting(_ text: String) throws {
        let error = try #require(failure(text))
        #expect(error.message.contains("nested more than 100 levels"), "\(error.message)")
    }

    @Test("nesting up to the limit is accepted")
    func nestingAtLimit() throws {
        _ = try parse(String(repeating: "(", count: 90) + "1" + String(repeating: ")", count: 90))
        _ = try parse(Array(repeating: "1", count: 99).joined(separator: " + "))
    }

    @Test("huge and odd numbers parse without trapping")
    func hugeNumbers() throws {
        for text in [String(repeating: "9", count: 5000), "1e999999999999", "1e-999999", "0x" + String(repeating: "F", count: 400), "0.0000000000000000000001"] {
            guard case .literal(.number(let value)) = try parse(text).kind else {
                Issue.record("\(text.prefix(20)) is not a number")
                continue
            }
            #expect(!value.isNaN)
        }
    }

    @Test("every prefix of a valid expression parses or fails cleanly")
    func prefixes() {
        let text = #"auth != null && root.child('rooms/' + $room).hasChildren(['a', "b"]) && newData.val().matches(/^[a-z]{1,3}\d*$/i) ? (1 + -2 * 3 % 4 / 5 >= .5e1) : !(data.exists() || 0x1F === now)"#
        let bytes = Array(text.utf8)
        var accepted = 0
        for end in 0...bytes.count {
            if (try? ExpressionParser.parse(Array(bytes[..<end]), maxDepth: 100)) != nil { accepted += 1 }
        }
        #expect(accepted > 3)
        #expect((try? ExpressionParser.parse(bytes, maxDepth: 100)) != nil)
    }

    @Test("random bytes never trap the lexer, parser or checker")
    func randomBytes() throws {
        var generator = SplitMix(seed: 0x5EED)
        let alphabet = Array("aA$_0123456789.,;:?!&|=<>+-*/%()[]{}'\"\\ \n\trootauthdatanewData/^$i".utf8) + [0xC3, 0xA9, 0xFF]
        let rules = try RulesTestSupport.load(#"{"rules": {}}"#)
        for _ in 0..<3000 {
            let length = Int(generator.next() % 48)
            let bytes = (0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            if let syntax = try? ExpressionParser.parse(bytes, maxDepth: 100) {
                var checker = ExpressionChecker(kind: .write, captures: ["$a": 0], options: rules.options)
                _ = try? checker.compileRule(syntax)
            }
        }
    }
}

/// A small deterministic generator for reproducible pseudo-random inputs.
struct SplitMix: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
