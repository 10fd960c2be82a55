import DataModel
import Logging
import Rules
import Store

/// The security rules as a namespace's store applies them to writes (its ``WritePolicy``): compiled from a rules
/// revision of the namespace's log, judged on the store's sequencer against the whole tree as the write finds it.
struct RulesPolicy: WritePolicy {
    /// The compiled rules; also what reads are checked against while this revision is in force.
    let rules: RuleSet
    /// Logs each live denial with every rule tried (`--explain-denials`), `nil` when off.
    let explainer: DenialExplainer?
    /// The console's live feed of evaluations, and the namespace whose log this policy judges.
    let feed: EvaluationFeed
    let namespace: String

    func allows(_ authorization: WriteAuthorization) -> Bool {
        var context = RulesContext(auth: authorization.auth, root: authorization.oldRoot, now: authorization.timestamp)
        let write = authorization.write
        if feed.isWatched, !authorization.isReplay {
            context.explain = true
            let decision = Self.authorize(write, rules: rules, context: context, newRoot: authorization.newRoot)
            feed.publish(namespace: namespace, operation: write.operationName, path: write.location,
                         auth: authorization.auth, decision: decision, time: authorization.timestamp)
            if !decision.allowed { explainer?.explain(decision, "write", write.location, auth: authorization.auth, caller: "store") }
            return decision.allowed
        }
        let decision = Self.authorize(write, rules: rules, context: context, newRoot: authorization.newRoot)
        if !decision.allowed, !authorization.isReplay, let explainer {
            context.explain = true
            let explained = Self.authorize(write, rules: rules, context: context, newRoot: authorization.newRoot)
            explainer.explain(explained, "write", write.location, auth: authorization.auth, caller: "store")
        }
        return decision.allowed
    }

    /// The rules' decision on `write`, with `newRoot` the tree it would leave.
    static func authorize(_ write: StoreWrite, rules: RuleSet, context: RulesContext, newRoot: Node) -> RulesDecision {
        switch write {
        case .set(let target, _, _):
            return rules.authorizeWrite(at: target.location, context: context, newRoot: newRoot)
        case .push(let parent, _):
            // The store judges a push as the set of the child it creates; this is a push not yet placed.
            return rules.authorizeWrite(at: parent, context: context, newRoot: newRoot)
        case .update(let path, let entries):
            return rules.authorizeUpdate(
                at: path, changedPaths: entries.map(\.target.location), context: context, newRoot: newRoot)
        }
    }
}

/// Logs why an operation was denied: the path, the uid and each rule tried on the way down.
struct DenialExplainer: Sendable {
    let logger: Logger

    func explain(_ decision: RulesDecision, _ operation: String, _ path: Path, auth: JSONValue?, caller: String) {
        let uid = auth?["uid"]?.stringValue ?? "null"
        let steps = decision.trace.map { "\n  \($0)" }.joined()
        logger.notice("denied \(operation) at \(path) for uid \(uid) (\(caller)):\(steps)")
    }
}

extension StoreWrite {
    /// `set`, `update` or `push`, as the live requests view names it.
    var operationName: String {
        switch self {
        case .set: return "set"
        case .update: return "update"
        case .push: return "push"
        }
    }

    /// The location a write is addressed to (an update's base path, a push's parent).
    var location: Path {
        switch self {
        case .set(let target, _, _): return target.location
        case .update(let path, _), .push(let path, _): return path
        }
    }
}
