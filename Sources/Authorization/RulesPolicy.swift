import DataModel
import Rules
import Store

/// The security rules of one revision as the one ``AuthorizationPolicy``: the namespace's log judges writes with
/// it, the gateway judges reads and onDisconnect registrations with it, and the console's simulator and
/// `canopy rules test` run their cases through it (docs/protocol/security-rules.md). Each question is the one a
/// ``WritePreview`` or a ``ReadQuestion`` asks, so every caller gets the same decision.
public struct RulesPolicy: AuthorizationPolicy {
    /// The compiled rules.
    public let rules: RuleSet
    /// Who hears live decisions (the console's feed, denial explanations); `nil`: nobody.
    public let observer: (any DecisionObserver)?

    /// The policy of `rules`, reporting live decisions to `observer`.
    public init(rules: RuleSet, observer: (any DecisionObserver)? = nil) {
        self.rules = rules
        self.observer = observer
    }

    /// The rules' decision on a read, with the trace of every rule tried when `explain` is set.
    public func decide(_ question: ReadQuestion, explain: Bool) -> RulesDecision {
        let context = RulesContext(auth: question.auth, root: question.root, now: question.now, explain: explain)
        return rules.authorizeRead(at: question.path, query: question.query, context: context)
    }

    /// The rules' decision on a write, with the trace of every rule tried when `explain` is set.
    public func decide(_ question: WriteQuestion, explain: Bool) -> RulesDecision {
        let context = RulesContext(auth: question.auth, root: question.oldRoot, now: question.timestamp, explain: explain)
        switch question.write {
        case .set(.node(let path), _, _), .set(.priority(of: let path), _, _), .push(let path, _):
            return rules.authorizeWrite(at: path, context: context, newRoot: question.newRoot)
        case .update(let path, let entries):
            let changed = entries.map { entry -> Path in
                switch entry.target {
                case .node(let relative), .priority(of: let relative): return relative
                }
            }
            return rules.authorizeUpdate(at: path, changedPaths: changed, context: context, newRoot: question.newRoot)
        }
    }

    public func mayRead(_ question: ReadQuestion) -> Bool {
        guard let observer, let caller = question.caller else { return decide(question, explain: false).allowed }
        return judge(reporting: DecisionReport(operation: question.query == nil ? "read" : "query",
                                               path: question.path, auth: question.auth, caller: caller,
                                               time: question.now),
                     to: observer) { decide(question, explain: $0) }
    }

    public func mayWrite(_ question: WriteQuestion) -> Bool {
        guard let observer, let caller = question.caller else { return decide(question, explain: false).allowed }
        return judge(reporting: DecisionReport(operation: question.operation, path: question.write.location,
                                               auth: question.auth, caller: caller, time: question.timestamp),
                     to: observer) { decide(question, explain: $0) }
    }

    /// Decides, tracing only when the observer wants this decision: every one while it watches, otherwise a
    /// denial it explains (decided again with its trace, so allowed decisions never pay for tracing). The report is
    /// made only for a decision the observer hears.
    private func judge(reporting report: @autoclosure () -> DecisionReport, to observer: any DecisionObserver,
                       _ decide: (_ explain: Bool) -> RulesDecision) -> Bool
    {
        if observer.wantsEveryDecision {
            let decision = decide(true)
            observer.observe(decision, report())
            return decision.allowed
        }
        let decision = decide(false)
        if !decision.allowed, observer.wantsDenials { observer.observe(decide(true), report()) }
        return decision.allowed
    }
}

extension RulesPolicy {
    /// A compiler of rules revisions into policies that report to `observer`; `reusing` may hand back rules already
    /// compiled from the same text (so that one object's coverage counts every decision).
    public static func compiler(
        observer: (any DecisionObserver)?,
        reusing compiled: @escaping @Sendable (_ source: [UInt8]) -> RuleSet? = { _ in nil }
    ) -> RulesCompiler {
        { source in
            (compiled(source) ?? (try? RuleSet(source: source, fileName: "database.rules.json")))
                .map { RulesPolicy(rules: $0, observer: observer) }
        }
    }

    /// The compiler of offline tools (`canopy import`, `export`): nobody hears their decisions.
    public static let offlineCompiler: RulesCompiler = compiler(observer: nil)
}
