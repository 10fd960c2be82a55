import DataModel
import Rules
import Store

/// The outcome of running one ``RulesTestCase``.
public struct RulesTestResult: Sendable {
    /// The case's name.
    public var name: String
    /// What the case expected.
    public var expectAllowed: Bool
    /// What the rules decided (with the trace when running with `explain`).
    public var decision: RulesDecision
    /// Why the write cannot be made at all (a server value that does not resolve, a priority that is not a number,
    /// a string or nothing), as the server would refuse it; the case then fails.
    public var setupError: String?

    /// Whether the decision matches the expectation.
    public var passed: Bool { setupError == nil && decision.allowed == expectAllowed }
}

extension RulesPolicy {
    /// Runs one case as the server would judge it: a read as a ``ReadQuestion``; a write previewed on the case's
    /// data at its `now` (``WritePreview``, the log's own) and judged like the log judges it. Nothing is reported.
    public func run(_ testCase: RulesTestCase, explain: Bool = false) -> RulesTestResult {
        var result = RulesTestResult(name: testCase.name, expectAllowed: testCase.expectAllowed,
                                     decision: RulesDecision(allowed: false), setupError: nil)
        let write: StoreWrite
        switch testCase.operation {
        case .read(let query):
            let question = ReadQuestion(path: testCase.path, query: query, auth: testCase.auth, root: testCase.data,
                                        now: testCase.now, caller: nil)
            result.decision = decide(question, explain: explain)
            return result
        case .set(let value): write = .set(.node(testCase.path), value, expectedHash: nil)
        case .setPriority(let value): write = .set(.priority(of: testCase.path), value, expectedHash: nil)
        case .update(let entries): write = .update(testCase.path, entries)
        }
        do throws(StoreError) {
            let preview = try WritePreview(write, on: testCase.data, at: testCase.now, pushKey: WritePreview.noPushKey)
            let question = preview.question(auth: testCase.auth, timestamp: testCase.now,
                                            operation: write.operationName, caller: nil)
            result.decision = decide(question, explain: explain)
        } catch {
            result.setupError = error.description
        }
        return result
    }
}
