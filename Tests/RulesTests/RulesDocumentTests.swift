import DataModel
import Testing

@testable import Rules

@Suite("Rules file reading (security-rules.md §1.2, §1.3)")
struct RulesDocumentTests {
    @Test("comments, raw line breaks in strings and a byte order mark are accepted")
    func jsonSuperset() throws {
        let text = """
            \u{FEFF}// Chat rules
            {
              /* the whole tree */
              "rules": { // trailing comment
                "notes": {
                  ".read": "auth != null &&
                    auth.uid == 'alice'", /* after a value */
                  ".write": false
                }
              }
            }
            """
        let rules = try RulesTestSupport.load(text)
        let coverage = rules.coverage
        #expect(coverage.map(\.rulePath) == ["/notes/.read", "/notes/.write"])
        #expect(coverage[0].source == "auth != null &&\n        auth.uid == 'alice'")
        #expect(coverage[0].position == SourcePosition(line: 6, column: 16))
        let alice = RulesContext(auth: try RulesTestSupport.json(#"{"uid":"alice"}"#), root: .empty, now: 0)
        #expect(rules.authorizeRead(at: try Path("/notes"), query: nil, context: alice).allowed)
    }

    @Test("an empty rules object loads and grants nothing")
    func emptyRules() throws {
        let rules = try RulesTestSupport.load(#"{"rules": {}}"#)
        let context = RulesContext(auth: nil, root: .empty, now: 0)
        #expect(!rules.authorizeRead(at: .root, query: nil, context: context).allowed)
        #expect(!rules.authorizeWrite(at: .root, context: context, newRoot: Node(.number(1))).allowed)
    }

    @Test(
        "syntax errors are reported with line, column and rule path",
        arguments: [
            (#"{"rules": {"a": {".read": true,}}}"#, 1, 32, "trailing comma", "/a"),
            ("{\"rules\": {\n  \"a\": {\".read\": true},\n  \"a\": {}\n}}", 3, 3, "duplicate key \"a\"", "/a"),
            (#"{"rules": {'a': {}}}"#, 1, 12, "double-quoted key", "/"),
            (#"{"rules": {"a": {".read": 'true'}}}"#, 1, 27, "double quotes", "/a/.read"),
            (#"{"rules": {"a": [1, 2,]}}"#, 1, 23, "trailing comma before ']'", "/a"),
            ("{\"rules\": {\"a\": \"x\ty\"}}", 1, 19, "control character 0x09", "/a"),
            (#"{"rules": {"a": "\q"}}"#, 1, 18, "invalid escape", "/a"),
            (#"{"rules": {"a": "\ud800"}}"#, 1, 18, "unpaired surrogate", "/a"),
            ("{\"rules\": {\"a\": \"unterminated}}", 1, 17, "unterminated string", "/a"),
            ("{\"rules\": {} /* never closed", 1, 14, "unterminated /* comment", ""),
            (#"{"rules": {}} {}"#, 1, 15, "after the document", ""),
            (#"{"rules": {"a": tru}}"#, 1, 17, "expected a value", "/a"),
            (#"{"rules": {"a": 01}}"#, 1, 17, "leading zero", "/a"),
            (#"{"rules": {"a": / }}"#, 1, 17, "comments start with", "/a"),
            (#"{"rules": {"a": {".read": true} "b": {}}}"#, 1, 33, "expected ',' or '}'", "/"),
            ("{\"rules\": ", 1, 11, "unexpected end of file", "/"),
        ] as [(String, Int, Int, String, String)])
    func syntaxErrors(text: String, line: Int, column: Int, message: String, rulePath: String) throws {
        let error = try #require(RulesTestSupport.loadError(text))
        let first = try #require(error.errors.first)
        #expect(first.position == SourcePosition(line: line, column: column), "\(first)")
        #expect(first.message.contains(message), "\(first)")
        #expect(first.rulePath == rulePath, "\(first)")
        #expect(first.file == "test.rules.json")
    }

    @Test("invalid UTF-8 in a string is rejected at its byte")
    func invalidUTF8() throws {
        var bytes = Array(#"{"rules": {"a": ""#.utf8)
        bytes += [0xC3, 0x28]
        bytes += Array(#""}}"#.utf8)
        do {
            _ = try RuleSet(source: bytes, fileName: "bad.json")
            Issue.record("invalid UTF-8 was accepted")
        } catch {
            #expect(error.errors.first?.position == SourcePosition(line: 1, column: 18))
            #expect(error.errors.first?.message == "invalid UTF-8")
        }
    }

    @Test("columns count characters, not bytes")
    func unicodeColumns() throws {
        let error = try #require(RulesTestSupport.loadError("{\"rules\": {\"é€😀\": {\".read\": 7}}}"))
        #expect(error.errors.first?.position == SourcePosition(line: 1, column: 29))
        #expect(error.errors.first?.rulePath == "/é€😀/.read")
    }

    @Test(
        "structure errors name the rule path",
        arguments: [
            (#"[]"#, "must be an object", ""),
            (#"{"rulez": {}}"#, "unexpected top-level key \"rulez\"", ""),
            (#"{}"#, "has no \"rules\" object", ""),
            (#"{"rules": true}"#, "\"rules\" must be an object", "/"),
            (#"{"rules": {"a": {".reed": true}}}"#, "unknown rule type \".reed\"", "/a/.reed"),
            (#"{"rules": {"a": {".read": 1}}}"#, ".read must be an expression string or a boolean, not a number", "/a/.read"),
            (#"{"rules": {"a": {".write": {}}}}"#, "not an object", "/a/.write"),
            (#"{"rules": {"a": {".validate": null}}}"#, "not null", "/a/.validate"),
            (#"{"rules": {"a": "x"}}"#, "must be an object, not a string", "/a"),
            (#"{"rules": {"a": null}}"#, "must be an object, not null", "/a"),
            (#"{"rules": {"a#b": {}}}"#, "is not a valid key", "/a#b"),
            (#"{"rules": {"$a": {}, "$b": {}}}"#, "only one $wildcard per location", "/$b"),
            (#"{"rules": {"$a": {"$a": {}}}}"#, "already captured", "/$a/$a"),
            (#"{"rules": {"$": {}}}"#, "not a valid wildcard name", "/$"),
            (#"{"rules": {"a": {".indexOn": 5}}}"#, ".indexOn must be a string or an array", "/a/.indexOn"),
            (#"{"rules": {"a": {".indexOn": ["x", 5]}}}"#, ".indexOn entries must be strings", "/a/.indexOn"),
            (#"{"rules": {"a": {".indexOn": "a.b"}}}"#, "not a valid .indexOn entry", "/a/.indexOn"),
            (#"{"rules": {"a": {".read": "newData.exists()"}}}"#, "newData is not available in .read", "/a/.read"),
            (#"{"rules": {"a": {".read": "$x == 'a'"}}}"#, "unknown variable '$x'", "/a/.read"),
        ] as [(String, String, String)])
    func structureErrors(text: String, message: String, rulePath: String) throws {
        let error = try #require(RulesTestSupport.loadError(text))
        let first = try #require(error.errors.first)
        #expect(first.message.contains(message), "\(first)")
        #expect(first.rulePath == rulePath, "\(first)")
    }

    @Test("an error inside an expression points at the failing token, through escapes and line breaks")
    func expressionErrorPosition() throws {
        let text = "{\"rules\": {\"a\": {\n  \".read\": \"\\\"x\\\" == 'x' &&\n    skies == 1\"\n}}}"
        let error = try #require(RulesTestSupport.loadError(text))
        let first = try #require(error.errors.first)
        #expect(first.position == SourcePosition(line: 3, column: 5), "\(first)")
        #expect(first.message.contains("unknown variable 'skies'"))
        #expect(first.rulePath == "/a/.read")
        #expect(first.description == "test.rules.json:3:5: error: \(first.message) (at /a/.read)")
    }

    @Test("every bad expression in a file is reported, in file order")
    func allErrors() throws {
        let text = #"{"rules": {"a": {".read": "7", ".write": "x"}, "b": {".validate": "root.foo"}}}"#
        let error = try #require(RulesTestSupport.loadError(text))
        #expect(error.errors.map(\.rulePath) == ["/a/.read", "/a/.write", "/b/.validate"])
    }

    @Test("the error count is capped")
    func errorCap() throws {
        var members: [String] = []
        for index in 0..<20 { members.append("\"k\(index)\": {\".read\": 1}") }
        let text = "{\"rules\": {\(members.joined(separator: ","))}}"
        var options = RulesOptions()
        options.limits.maxErrors = 5
        let error = try #require(RulesTestSupport.loadError(text, options: options))
        #expect(error.errors.count == 6)
        #expect(error.errors.last?.message.contains("too many errors") == true)
    }

    @Test("size, nesting and expression-length limits")
    func limits() throws {
        var options = RulesOptions()
        options.limits.maxFileBytes = 20
        #expect(RulesTestSupport.loadError(#"{"rules": {"a": {".read": true}}}"#, options: options)?.errors.first?.position == nil)

        let deep = String(repeating: "{\"a\":", count: 100) + "{}" + String(repeating: "}", count: 100)
        let nested = try #require(RulesTestSupport.loadError("{\"rules\": \(deep)}"))
        #expect(nested.errors.first?.message.contains("nesting deeper than 64") == true)

        options = RulesOptions()
        options.limits.maxExpressionBytes = 10
        let long = try #require(RulesTestSupport.loadError(#"{"rules": {".read": "true == true"}}"#, options: options))
        #expect(long.errors.first?.message.contains("more than the limit of 10") == true)
    }

    @Test("a missing file is a load error without a position")
    func missingFile() {
        do {
            _ = try RuleSet.load(contentsOf: "/nonexistent/database.rules.json")
            Issue.record("loaded a missing file")
        } catch {
            #expect(error.errors.first?.position == nil)
            #expect(error.errors.first?.message.contains("cannot open") == true)
        }
    }

    @Test(".indexOn declarations are collected with their rules path")
    func indexes() throws {
        let rules = try RulesTestSupport.load(
            #"{"rules": {"rooms": {"$room": {"messages": {".indexOn": ["timestamp", "author/name", ".value"]}}}, "users": {".indexOn": "email"}}}"#
        )
        #expect(
            rules.indexes.sorted { $0.path.count > $1.path.count } == [
                RulesIndexDeclaration(path: ["rooms", "$room", "messages"], keys: ["timestamp", "author/name", ".value"]),
                RulesIndexDeclaration(path: ["users"], keys: ["email"]),
            ])
    }
}
