import Testing

@testable import Rules

private struct BudgetExhausted: Error {}

@Suite("Regular expressions (security-rules.md §10)")
struct RegexTests {
    private func program(_ pattern: String, _ flags: String = "") throws -> RegexProgram {
        try RegexParser.compile(pattern: pattern, flags: flags, maxInstructions: 10_000)
    }

    private func matches(_ pattern: String, _ flags: String = "", _ text: String) throws -> Bool {
        var budget = 1_000_000
        guard let result = try program(pattern, flags).matches(text, budget: &budget) else {
            throw BudgetExhausted()
        }
        return result
    }

    @Test(
        "live-verified patterns and the documentation's examples",
        arguments: [
            (#"^\d\d\d-\d\d-\d\d\d\d$"#, "", "123-45-6789", true),
            (#"^\d\d\d-\d\d-\d\d\d\d$"#, "", "123-45-678", false),
            (#"^-?\d+$"#, "", "-42", true),
            (#"^-?\d+$"#, "", "4.2", false),
            (#"^-?(\d+\.?\d*|\.\d+)$"#, "", "3.", true),
            (#"^-?(\d+\.?\d*|\.\d+)$"#, "", ".5", true),
            (#"^-?(\d+\.?\d*|\.\d+)$"#, "", ".", false),
            (#"^[a-z]+$"#, "i", "HeLLo", true),
            (#"^[a-z]+$"#, "", "HeLLo", false),
            (#"^(19|20)\d\d$"#, "", "1999", true),
            (#"^(19|20)\d\d$"#, "", "2100", false),
            (#"^([a-z0-9]+-)+[a-z0-9]+$"#, "", "my-post-2", true),
            (#"^([a-z0-9]+-)+[a-z0-9]+$"#, "", "post", false),
            (#"^.+\.(com|org|edu)$"#, "", "mit.edu", true),
            (#"^.+\.(com|org|edu)$"#, "", ".com", false),
            (#".*@google\.com$"#, "", "larry@google.com", true),
            (#".*@google\.com$"#, "", "larry@google.company", false),
        ] as [(String, String, String, Bool)])
    func documented(pattern: String, flags: String, text: String, expected: Bool) throws {
        #expect(try matches(pattern, flags, text) == expected)
    }

    @Test("matching is a search unless anchored")
    func search() throws {
        #expect(try matches("a", "", "ba"))
        #expect(try matches("^a", "", "ab"))
        #expect(try !matches("^a", "", "ba"))
        #expect(try matches("a$", "", "ba"))
        #expect(try !matches("a$", "", "ab"))
        #expect(try matches("^$", "", ""))
        #expect(try !matches("^$", "", "x"))
        #expect(try matches("x*", "", ""))
        #expect(try matches("b+", "", "aaabbb"))
    }

    @Test("classes, sets, escapes and the dot")
    func classes() throws {
        #expect(try matches(#"^\w+$"#, "", "ab_9"))
        #expect(try !matches(#"^\w+$"#, "", "é"))
        #expect(try matches(#"^\s$"#, "", "\u{00A0}"))
        #expect(try matches(#"^\S\D\W$"#, "", "xx-"))
        #expect(try matches("^[^abc]$", "", "d"))
        #expect(try !matches("^[^abc]$", "", "b"))
        #expect(try matches(#"^[\d.-]+$"#, "", "1.2-3"))
        #expect(try matches("^[a-]$", "", "-"))
        #expect(try matches(#"^[\]]$"#, "", "]"))
        #expect(try matches("^.$", "", "😀"))
        #expect(try !matches("^.$", "", "\n"))
        #expect(try matches(#"^\.\*\+\?\(\)\[\{\|\^\$\\\/$"#, "", #".*+?()[{|^$\/"#))
        #expect(try matches(#"^\t\n$"#, "", "\t\n"))
        #expect(try matches("^[é-ë]$", "", "ê"))
        #expect(try matches("a$", "", "a$"[...].dropLast().description))
        #expect(try matches(#"\$$"#, "", "cost$"))
        #expect(try matches(#"\\$"#, "", #"a\"#))
    }

    @Test("case-insensitive matching folds letters beyond ASCII")
    func caseInsensitive() throws {
        #expect(try matches("^straße$", "i", "STRAßE"))
        #expect(try matches("^ÉTÉ$", "i", "été"))
        #expect(try matches("^[À-Ý]+$", "i", "àé"))
        #expect(try !matches("^abc$", "", "ABC"))
    }

    @Test("counted repetition")
    func counted() throws {
        #expect(try matches("^a{3}$", "", "aaa"))
        #expect(try !matches("^a{3}$", "", "aa"))
        #expect(try matches("^a{2,}$", "", "aaaaa"))
        #expect(try matches("^a{1,3}b$", "", "aab"))
        #expect(try !matches("^a{1,3}b$", "", "aaaab"))
        #expect(try matches("^(ab){0,2}$", "", ""))
        #expect(try matches("^a{0}$", "", ""))
    }

    @Test("patterns that backtracking engines take exponential time on run in linear time")
    func noCatastrophicBacktracking() throws {
        var budget = 10_000_000
        let text = String(repeating: "a", count: 5000) + "b"
        #expect(try program("^(a+)+$").matches(text, budget: &budget) == false)
        #expect(try program("^(a|a)*$").matches(text, budget: &budget) == false)
        #expect(try program("(x*)*y").matches(text, budget: &budget) == false)
    }

    @Test("a match over the step budget reports exhaustion")
    func budget() throws {
        var budget = 100
        #expect(try program("^a*b").matches(String(repeating: "a", count: 1000), budget: &budget) == nil)
    }

    @Test("a compiled program larger than the limit is refused at load")
    func programLimit() {
        #expect(throws: RegexParser.Failure.self) {
            _ = try RegexParser.compile(pattern: "((a{1000}){1000}){1000}", flags: "", maxInstructions: 10_000)
        }
    }

    @Test(
        "unsupported constructs are rejected with their offset",
        arguments: [
            ("(^a)", "", 1), ("a$b", "", 1), ("a|", "", 2), ("(|a)", "", 1), ("a**", "", 2), ("a+?", "", 2),
            ("(?:a)", "", 1), (#"\b"#, "", 0), (#"\1"#, "", 0), (#"\u0041"#, "", 0), ("[]", "", 0), ("[b-a]", "", 1),
            ("a{3,2}", "", 1), ("{", "", 0), ("a}", "", 1), ("a]", "", 1), ("*a", "", 0), ("(a", "", 0), ("a)", "", 1),
            ("a", "g", 2), ("a", "ii", 3), ("a", "m", 2), ("[a", "", 0), (#"a\"#, "", 1),
        ] as [(String, String, Int)])
    func unsupported(pattern: String, flags: String, offset: Int) {
        do {
            _ = try RegexParser.compile(pattern: pattern, flags: flags, maxInstructions: 10_000)
            Issue.record("/\(pattern)/\(flags) was accepted")
        } catch {
            #expect(error.offset == offset, "/\(pattern)/\(flags): \(error.message)")
        }
    }

    @Test("a regex failing its step budget fails the rule")
    func budgetInRule() throws {
        var options = RulesOptions()
        options.limits.maxRegexSteps = 50
        let long = String(repeating: "x", count: 200)
        #expect(try evaluate("root.val().matches(/^x*$/)", data: "\"\(long)\"", options: options) == .error)
        #expect(try evaluate("root.val().matches(/^x*$/)", data: "\"xx\"", options: options) == .true)
    }
}
