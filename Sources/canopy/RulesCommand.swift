import ArgumentParser
import Authorization
import Foundation
import Rules

/// `canopy rules`: check a rules file, or run allow/deny cases against it.
struct RulesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rules", abstract: "Check a security rules file or run test cases against it.",
        subcommands: [RulesCheckCommand.self, RulesTestCommand.self])
}

/// `canopy rules check FILE`: parse and statically check a rules file.
struct RulesCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check", abstract: "Parse and check a rules file; exits non-zero when it has errors.")

    @Argument(help: "The rules file (database.rules.json).")
    var file: String

    func run() throws {
        do {
            let rules = try RuleSet.load(contentsOf: file)
            for warning in rules.warnings { print(warning) }
            print("\(file): OK (\(rules.coverage.count) rule expressions, \(rules.warnings.count) warnings)")
        } catch {
            for warning in error.warnings { print(warning) }
            for problem in error.errors { print(problem) }
            throw ExitCode(1)
        }
    }
}

/// `canopy rules test FILE CASES.json`: run allow/deny cases and report them with the rules' coverage.
struct RulesTestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Run allow/deny cases against a rules file and print the results and the rules' coverage.",
        discussion: """
            CASES.json holds {"data":…, "auth":…, "now":…, "cases":[{"name", "operation": "read"|"set"|"update", \
            "path", "value", "query", "auth", "data", "expected": "allow"|"deny"}]}; case members override the \
            file's defaults. Exits non-zero when a case does not get its expected outcome.
            """)

    @Argument(help: "[RULES] CASES: the rules file and the cases file; without RULES, the rules the cases file embeds.")
    var files: [String]
    @Flag(help: "Print every rule evaluated for each failing case.")
    var explain = false

    func validate() throws {
        guard (1...2).contains(files.count) else { throw ValidationError("expected [RULES] CASES") }
    }

    func run() throws {
        let cases = files[files.count - 1]
        guard let bytes = FileManager.default.contents(atPath: cases) else {
            throw ConfigurationError(description: "cannot read \(cases)")
        }
        let suite: RulesTestSuite
        do {
            suite = try RulesTestSuite.parse(Array(bytes))
        } catch {
            throw ConfigurationError(description: "\(cases): \(error)")
        }
        let rules: RuleSet
        do {
            if files.count == 2 {
                rules = try RuleSet.load(contentsOf: files[0])
            } else if let embedded = suite.rulesSource {
                rules = try RuleSet(source: embedded, fileName: cases)
            } else {
                throw ConfigurationError(description: "\(cases) embeds no rules; name a rules file")
            }
        } catch let error as RulesLoadError {
            for problem in error.errors { print(problem) }
            throw ExitCode(1)
        }
        var failures = 0
        print("| result | expected | got | case |")
        print("|---|---|---|---|")
        for testCase in suite.cases {
            let result = RulesPolicy(rules: rules).run(testCase, explain: explain)
            if !result.passed { failures += 1 }
            let got = result.setupError.map { "error: \($0)" } ?? (result.decision.allowed ? "allow" : "deny")
            print("| \(result.passed ? "pass" : "FAIL") | \(result.expectAllowed ? "allow" : "deny") | \(got) | \(result.name) |")
            if explain && !result.passed {
                for step in result.decision.trace { print("|   |   |   | \(step) |") }
            }
        }
        print("\n\(suite.cases.count - failures) of \(suite.cases.count) cases passed")
        printCoverage(rules.coverage)
        if failures > 0 { throw ExitCode(1) }
    }

    private func printCoverage(_ coverage: [RuleCoverage]) {
        print("\nCoverage (evaluations of each rule expression: true / false / error):\n")
        print("| rule | line | true | false | error | expression |")
        print("|---|---|---|---|---|---|")
        for rule in coverage {
            let source = rule.source.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "|", with: "\\\\|")
            print("| \(rule.rulePath) | \(rule.position.line) | \(rule.trueCount) | \(rule.falseCount) | \(rule.errorCount) | `\(source)` |")
        }
        let unexercised = coverage.filter { $0.evaluations == 0 }.count
        print("\n\(coverage.count - unexercised) of \(coverage.count) rule expressions evaluated")
    }
}
