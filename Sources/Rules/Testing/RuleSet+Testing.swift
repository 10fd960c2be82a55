import DataModel

/// The outcome of running one ``RulesTestCase``.
public struct RulesTestResult: Sendable {
    /// The case's name.
    public var name: String
    /// What the case expected.
    public var expectAllowed: Bool
    /// What the rules decided (with the trace when running with `explain`).
    public var decision: RulesDecision
    /// Why the case could not be run (a server value that cannot be resolved); the case then fails.
    public var setupError: String?

    /// Whether the decision matches the expectation.
    public var passed: Bool { setupError == nil && decision.allowed == expectAllowed }
}

extension RuleSet {
    /// Runs one case: builds the data after the operation exactly as the server would (server values resolved
    /// with the case's `now`, update entries merged) and asks the rules.
    public func run(_ testCase: RulesTestCase, explain: Bool = false) -> RulesTestResult {
        let context = RulesContext(auth: testCase.auth, root: testCase.data, now: testCase.now, explain: explain)
        var result = RulesTestResult(
            name: testCase.name, expectAllowed: testCase.expectAllowed, decision: RulesDecision(allowed: false), setupError: nil)
        let data = testCase.data
        let path = testCase.path
        do throws(ValueError) {
            switch testCase.operation {
            case .read(let query):
                result.decision = authorizeRead(at: path, query: query, context: context)
            case .set(let value):
                let node = try value.resolved(timestamp: testCase.now) { data.descendant(at: path.appending($0)) }
                result.decision = authorizeWrite(at: path, context: context, newRoot: data.setting(node, at: path))
            case .update(let entries):
                var newRoot = data
                var changed: [Path] = []
                for entry in entries {
                    switch entry.target {
                    case .node(let relative):
                        let target = path.appending(relative)
                        let node = try entry.value.resolved(timestamp: testCase.now) { data.descendant(at: target.appending($0)) }
                        newRoot.set(node, at: target)
                        changed.append(relative)
                    case .priority(of: let relative):
                        let target = path.appending(relative)
                        let node = try entry.value.resolved(timestamp: testCase.now) { _ in data.descendant(at: target) }
                        let priority: Priority?
                        switch node.leafValue {
                        case .number(let number)?: priority = .number(number)
                        case .string(let text)?: priority = .string(text)
                        default: priority = nil
                        }
                        newRoot.modifyDescendant(at: target) { $0.setPriority(priority) }
                        changed.append(relative)
                    }
                }
                result.decision = authorizeUpdate(at: path, changedPaths: changed, context: context, newRoot: newRoot)
            }
        } catch {
            result.setupError = "\(error)"
        }
        return result
    }
}
