import Authorization
import DataModel
import Foundation
import Testing

@testable import Rules

/// Runs the allow/deny corpus in `Fixtures/*.json` — the format `canopy rules test` reads.
@Suite("Allow/deny corpus (Fixtures/*.json)")
struct CorpusTests {
    static let files: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: RulesTestSupport.fixtures)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted()
    }()

    static func suite(_ file: String) throws -> (RuleSet, RulesTestSuite) {
        let bytes = try #require(FileManager.default.contents(atPath: RulesTestSupport.fixtures + "/" + file))
        let suite = try RulesTestSuite.parse(Array(bytes))
        let rules = try RuleSet(source: try #require(suite.rulesSource), fileName: file)
        return (rules, suite)
    }

    @Test("the corpus has at least 150 cases across its files")
    func size() throws {
        var total = 0
        for file in Self.files { total += try Self.suite(file).1.cases.count }
        #expect(Self.files.count >= 10)
        #expect(total >= 150)
    }

    @Test("every case gets the expected decision", arguments: files)
    func corpus(_ file: String) throws {
        let (rules, suite) = try Self.suite(file)
        #expect(!suite.cases.isEmpty)
        for testCase in suite.cases {
            let result = RulesPolicy(rules: rules).run(testCase, explain: true)
            #expect(
                result.passed,
                "\(file): \(testCase.name): expected \(testCase.expectAllowed ? "allow" : "deny")\(result.setupError.map { " (setup: \($0))" } ?? "")\n\(result.decision)"
            )
        }
    }

    @Test("every reachable rule expression of the corpus is exercised")
    func coverage() throws {
        for file in Self.files {
            let (rules, suite) = try Self.suite(file)
            for testCase in suite.cases { _ = RulesPolicy(rules: rules).run(testCase) }
            // Rules below an unconditional grant can never be reached; the loader warns about exactly those.
            let shadowed = Set(rules.warnings.filter { $0.message.contains("cannot restrict anything") }.map(\.rulePath))
            for rule in rules.coverage where rule.evaluations == 0 && !shadowed.contains(rule.rulePath) {
                Issue.record("\(file): \(rule.rulePath) was never evaluated")
            }
        }
    }
}

@Suite("Cases file format")
struct RulesTestSuiteFormatTests {
    private func failure(_ text: String) -> String? {
        do {
            _ = try RulesTestSuite.parse(Array(text.utf8))
            return nil
        } catch {
            return error.message
        }
    }

    @Test(
        "malformed case files name the case and the member",
        arguments: [
            ("[]", "must be an object"),
            ("{}", "needs a \"cases\" array"),
            (#"{"cases": [{"operation": "read", "expected": "allow"}]}"#, "case 0 (case 0): \"path\""),
            (#"{"cases": [{"name": "x", "operation": "read", "path": "/a", "expected": "maybe"}]}"#, "case 0 (x): \"expected\""),
            (#"{"cases": [{"operation": "delete", "path": "/a", "expected": "deny"}]}"#, "\"operation\" must be"),
            (#"{"cases": [{"operation": "set", "path": "/a", "expected": "deny"}]}"#, "needs a \"value\""),
            (#"{"cases": [{"operation": "update", "path": "/a", "value": 1, "expected": "deny"}]}"#, "needs a \"value\" object"),
            (#"{"cases": [{"operation": "update", "path": "/a", "value": {"a": 1, "a/b": 2}, "expected": "deny"}]}"#, "not a valid update"),
            (#"{"cases": [{"operation": "set", "path": "/a", "value": {".bad": 1}, "expected": "deny"}]}"#, "not valid Firebase data"),
            (#"{"cases": [{"operation": "read", "path": "/a", "query": {"orderBy": 1}, "expected": "deny"}]}"#, "\"orderBy\" must be a string"),
            (#"{"cases": [{"operation": "read", "path": "/a", "query": {"limitToFirst": 0}, "expected": "deny"}]}"#, "invalid query"),
            (#"{"cases": [{"operation": "read", "path": "/a", "query": {"startAt": 1, "foo": 2}, "expected": "deny"}]}"#, "unknown query member"),
            (#"{"now": "soon", "cases": []}"#, "now must be a number"),
            (#"{"cases": [], "data": {"a": {".sv": 5}}}"#, "data: not valid Firebase data"),
        ])
    func malformed(text: String, message: String) throws {
        let error = try #require(failure(text))
        #expect(error.contains(message), "\(error)")
    }

    @Test("defaults apply to cases that do not override them")
    func defaults() throws {
        let suite = try RulesTestSuite.parse(
            Array(
                #"{"data": {"a": 1}, "auth": {"uid": "u"}, "now": 5, "cases": [{"operation": "read", "path": "/a", "expected": "allow"}, {"operation": "read", "path": "/", "auth": null, "data": null, "now": 7, "expected": true}]}"#
                    .utf8))
        #expect(suite.rulesSource == nil)
        #expect(suite.cases[0].auth == .object([("uid", .string("u"))]))
        #expect(suite.cases[0].data == Node(children: [ChildEntry(key: try Key("a"), node: Node(.number(1)))]))
        #expect(suite.cases[0].now == 5)
        #expect(suite.cases[1].auth == nil)
        #expect(suite.cases[1].data == .empty)
        #expect(suite.cases[1].now == 7)
        #expect(suite.cases[1].expectAllowed)
        #expect(suite.cases[1].name == "case 1")
    }
}
