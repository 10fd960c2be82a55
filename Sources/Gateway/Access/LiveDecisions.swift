import Authorization
import DataModel
import Logging
import Rules

/// Where a namespace's live rules decisions go: every one to the console's feed while a console watches, and each
/// denial to the log with every rule tried (`--explain-denials`).
struct LiveDecisions: DecisionObserver {
    /// The console's live feed of evaluations.
    let feed: EvaluationFeed
    /// Logs each denial with its trace, `nil` when off.
    let explainer: DenialExplainer?
    /// The namespace the feed names.
    let namespace: String

    var wantsEveryDecision: Bool { feed.isWatched }
    var wantsDenials: Bool { explainer != nil }

    func observe(_ decision: RulesDecision, _ report: DecisionReport) {
        if feed.isWatched {
            feed.publish(namespace: namespace, operation: report.operation, path: report.path, auth: report.auth,
                         decision: decision, time: report.time)
        }
        guard !decision.allowed, let explainer else { return }
        explainer.explain(decision, report)
    }
}

/// Logs why an operation was denied: the path, the uid and each rule tried on the way down.
struct DenialExplainer: Sendable {
    let logger: Logger

    func explain(_ decision: RulesDecision, _ report: DecisionReport) {
        let uid = report.auth?["uid"]?.stringValue ?? "null"
        let steps = decision.trace.map { "\n  \($0)" }.joined()
        let operation: String
        switch report.operation {
        case "read", "query": operation = "read"
        case "onDisconnect": operation = "onDisconnect write"
        default: operation = "write"
        }
        logger.notice("denied \(operation) at \(report.path) for uid \(uid) (\(report.caller)):\(steps)")
    }
}
