import Authorization
import DataModel
import Testing

@testable import Rules

@Suite("Rule sets: traces, coverage and warnings")
struct RuleSetTests {
    private let chat = #"""
        {"rules": {"rooms": {"$room": {
          ".read": "auth != null && data.child('members').hasChild(auth.uid)",
          "messages": {"$message": {
            ".write": "auth != null && root.child('rooms/' + $room + '/members/' + auth.uid).exists()",
            ".validate": "newData.hasChildren(['text'])",
            "text": {".validate": "newData.isString() && newData.val().length <= 10"}
          }}
        }}}}
        """#

    private func data() throws -> Node {
        try RulesTestSupport.data(#"{"rooms": {"r1": {"members": {"alice": true}}}}"#)
    }

    @Test("a denial explains every rule tried, with errors and their source")
    func trace() throws {
        let rules = try RulesTestSupport.load(chat)
        let root = try data()
        let path = try Path("/rooms/r1/messages/m1")
        let value = try RulesTestSupport.data(#"{"text": "far too long text"}"#)
        let alice = RulesContext(auth: try RulesTestSupport.json(#"{"uid":"alice"}"#), root: root, now: 0, explain: true)
        let denied = rules.authorizeWrite(at: path, context: alice, newRoot: root.setting(value, at: path))
        #expect(!denied.allowed)
        #expect(denied.trace.map(\.rulePath) == [
            "/rooms/$room/messages/$message/.write", "/rooms/$room/messages/$message/.validate",
            "/rooms/$room/messages/$message/text/.validate",
        ])
        #expect(denied.trace.map(\.outcome) == [.true, .true, .false])
        #expect(denied.trace[2].location == (try Path("/rooms/r1/messages/m1/text")))
        #expect(denied.trace[2].description.hasPrefix("/rooms/$room/messages/$message/text/.validate at /rooms/r1/messages/m1/text: false — "))

        let signedOut = RulesContext(auth: nil, root: root, now: 0, explain: true)
        let read = rules.authorizeRead(at: try Path("/rooms/r1"), query: nil, context: signedOut)
        #expect(!read.allowed)
        #expect(read.trace.map(\.outcome) == [.false])

        let bob = RulesContext(auth: nil, root: root, now: 0, explain: true)
        let error = rules.authorizeWrite(at: path, context: bob, newRoot: root)
        #expect(!error.allowed)
        #expect(error.trace.map(\.outcome) == [.false])
        let stranger = RulesContext(auth: .object([("token", .object([]))]), root: root, now: 0, explain: true)
        let failed = rules.authorizeWrite(at: path, context: stranger, newRoot: root.setting(value, at: path))
        guard case .error(let message) = try #require(failed.trace.first).outcome else {
            Issue.record("no error outcome: \(failed)")
            return
        }
        #expect(message == "'+' needs numbers or strings, found a string and null in `'rooms/' + $room + '/members/' + auth.uid`")
    }

    @Test("an explained write records rules at the root with the root as their location")
    func rootTrace() throws {
        let rules = try RulesTestSupport.load(#"{"rules": {".write": "auth != null", ".validate": "newData.hasChildren(['a'])", "a": {".validate": "newData.isNumber()"}}}"#)
        let context = RulesContext(auth: try RulesTestSupport.json(#"{"uid":"u"}"#), root: .empty, now: 0, explain: true)
        let value = try RulesTestSupport.data(#"{"a": 1}"#)
        let decision = rules.authorizeWrite(at: try Path("/"), context: context, newRoot: value)
        #expect(decision.allowed)
        #expect(decision.trace.map(\.rulePath) == ["/.write", "/.validate", "/a/.validate"])
        #expect(decision.trace.map(\.location) == [try Path("/"), try Path("/"), try Path("/a")])
    }

    @Test("without explain the trace stays empty")
    func noTrace() throws {
        let rules = try RulesTestSupport.load(chat)
        let context = RulesContext(auth: nil, root: try data(), now: 0)
        #expect(rules.authorizeRead(at: try Path("/rooms/r1"), query: nil, context: context).trace.isEmpty)
    }

    @Test("coverage counts each rule's outcomes")
    func coverage() throws {
        let rules = try RulesTestSupport.load(chat)
        let root = try data()
        let alice = RulesContext(auth: try RulesTestSupport.json(#"{"uid":"alice"}"#), root: root, now: 0)
        let path = try Path("/rooms/r1")
        for _ in 0..<3 { _ = rules.authorizeRead(at: path, query: nil, context: alice) }
        _ = rules.authorizeRead(at: path, query: nil, context: RulesContext(auth: nil, root: root, now: 0))
        _ = rules.authorizeRead(at: path, query: nil, context: RulesContext(auth: .object([("uid", .number(1))]), root: root, now: 0))
        let read = try #require(rules.coverage.first { $0.rulePath == "/rooms/$room/.read" })
        #expect((read.trueCount, read.falseCount, read.errorCount) == (3, 1, 1))
        #expect(read.position == SourcePosition(line: 2, column: 12))
        #expect(read.source == "auth != null && data.child('members').hasChild(auth.uid)")
        #expect(rules.coverage.map(\.kind) == [.read, .write, .validate, .validate])
    }

    @Test("coverage counters are safe under concurrent evaluation")
    func concurrentCoverage() async throws {
        let rules = try RulesTestSupport.load(chat)
        let root = try data()
        let alice = RulesContext(auth: try RulesTestSupport.json(#"{"uid":"alice"}"#), root: root, now: 0)
        let path = try Path("/rooms/r1")
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<500 { _ = rules.authorizeRead(at: path, query: nil, context: alice) }
                }
            }
        }
        #expect(rules.coverage.first?.trueCount == 4000)
    }

    @Test(
        "suspicious constructs are warnings",
        arguments: [
            (#"{"rules": {".read": true}}"#, "may read the whole database", "/.read"),
            (#"{"rules": {".write": "true"}}"#, "may write the whole database", "/.write"),
            (#"{"rules": {"a": {".read": true, "b": {".read": "auth != null"}}}}"#, "cannot restrict anything: /a/.read", "/a/b/.read"),
            (#"{"rules": {"a": {".write": true, "b": {".validate": "newData.isString()"}}}}"#, "anyone can delete", "/a/b/.validate"),
            (#"{"rules": {"a": {".read": "auth.uid.matches(/a/)"}}}"#, "anchor the pattern", "/a/.read"),
            (#"{"rules": {"a": {".indexOn": [".key"]}}}"#, "always indexed", "/a/.indexOn"),
            (#"{"rules": {"a": {".indexOn": ["x", "x"]}}}"#, "listed twice", "/a/.indexOn"),
            (#"{"rules": {"a": {".read": "auth.token.admin"}}}"#, "should be boolean", "/a/.read"),
        ])
    func warnings(text: String, message: String, rulePath: String) throws {
        let rules = try RulesTestSupport.load(text)
        #expect(rules.warnings.contains { $0.message.contains(message) && $0.rulePath == rulePath }, "\(rules.warnings)")
        #expect(rules.warnings.allSatisfy { $0.severity == .warning })
    }

    @Test("a clean file has no warnings")
    func clean() throws {
        #expect(try RulesTestSupport.load(chat).warnings.isEmpty)
    }

    @Test("a write below the rules tree is judged by the chain above it")
    func beyondRules() throws {
        let rules = try RulesTestSupport.load(#"{"rules": {"a": {".write": "newData.parent().exists() || true"}}}"#)
        let path = try Path("/a/b/c")
        let value = Node(.number(1))
        let context = RulesContext(auth: nil, root: .empty, now: 0)
        #expect(rules.authorizeWrite(at: path, context: context, newRoot: Node.empty.setting(value, at: path)).allowed)
        #expect(!rules.authorizeWrite(at: try Path("/x/y"), context: context, newRoot: .empty).allowed)
    }

    @Test("an update with no entries is allowed without consulting rules")
    func emptyUpdate() throws {
        let rules = try RulesTestSupport.load(#"{"rules": {}}"#)
        let context = RulesContext(auth: nil, root: .empty, now: 0, explain: true)
        let decision = rules.authorizeUpdate(at: try Path("/a"), changedPaths: [], context: context, newRoot: .empty)
        #expect(decision.allowed)
        #expect(decision.trace.isEmpty)
    }

    @Test("a commented rules file on disk decides the chat corpus exactly as its embedded copy")
    func loadFromDisk() throws {
        let rules = try RuleSet.load(contentsOf: RulesTestSupport.fixtures + "/Rules/chat.rules.json")
        #expect(rules.warnings.isEmpty)
        #expect(rules.indexes == [RulesIndexDeclaration(path: ["rooms", "$room", "messages"], keys: ["timestamp"])])
        let (embedded, suite) = try CorpusTests.suite("chat-app.json")
        #expect(rules.coverage.map(\.source.count) != [])
        for testCase in suite.cases {
            #expect(RulesPolicy(rules: rules).run(testCase).passed, "\(testCase.name)")
        }
        #expect(rules.coverage.count == embedded.coverage.count)
    }
}
