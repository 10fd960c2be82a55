import DataModel
import Rules
import Store

/// The security-rules decisions for one caller (a wire session, a REST request, an event stream) in one namespace
/// (security-rules.md): reads and onDisconnect registrations against a state of the namespace's store taken at
/// the operation's place in the order; writes are judged inside the store (``RulesPolicy``), which the gate names
/// the caller to. The admin credential bypasses rules; without rules everything is allowed.
struct RulesGate: Sendable {
    /// The rules' `auth`, or `nil` for the admin.
    let auth: JSONValue??
    /// Logs denials (`--explain-denials`), `nil` when off.
    let explainer: DenialExplainer?
    /// Names the caller in denial explanations (`session …`, `REST 127.0.0.1:…`).
    let caller: String
    /// The console's live feed of evaluations, and the namespace it names.
    let feed: EvaluationFeed
    let namespace: String

    init(gateway: Gateway, identity: ConnectionIdentity, caller: String, namespace: String) {
        auth = identity.rulesAuth
        explainer = gateway.configuration.explainDenials ? DenialExplainer(logger: gateway.logger) : nil
        self.caller = caller
        feed = gateway.evaluations
        self.namespace = namespace
    }

    /// Who the store should say made the caller's writes.
    var writeCaller: WriteCaller {
        guard case .some(let auth) = auth else { return .privileged }
        return .user(auth: auth)
    }

    /// Whether the caller may do what `decide` judges under the rules in force in `snapshot`: everything for the
    /// admin or without rules, nothing when the store's rules revision did not compile (it fails closed).
    private func allows(in snapshot: StoreSnapshot, _ decide: (RuleSet, JSONValue?) -> Bool) -> Bool {
        guard case .some(let auth) = auth, let policy = snapshot.policy else { return true }
        guard let rules = (policy as? RulesPolicy)?.rules else { return false }
        return decide(rules, auth)
    }

    /// Whether the caller may read `path` with `query` (`nil`: the whole location) in `snapshot`.
    func mayRead(_ path: Path, query: QueryParams?, in snapshot: StoreSnapshot) -> Bool {
        allows(in: snapshot) { rules, auth in
            var context = RulesContext(auth: auth, root: snapshot.root, now: snapshot.now)
            if feed.isWatched {
                context.explain = true
                let decision = rules.authorizeRead(at: path, query: query, context: context)
                feed.publish(namespace: namespace, operation: query == nil ? "read" : "query", path: path, auth: auth,
                             decision: decision, time: snapshot.now)
                if !decision.allowed {
                    explainer?.explain(decision, "read", path, auth: auth, caller: caller)
                }
                return decision.allowed
            }
            guard !rules.authorizeRead(at: path, query: query, context: context).allowed else { return true }
            if let explainer {
                context.explain = true
                explainer.explain(rules.authorizeRead(at: path, query: query, context: context), "read", path,
                                  auth: auth, caller: caller)
            }
            return false
        }
    }

    /// Whether an onDisconnect operation may be registered: the write judged against the tree of `snapshot`, with
    /// its server values resolved at the snapshot's time.
    func mayRegister(_ write: StoreWrite, in snapshot: StoreSnapshot) -> Bool {
        allows(in: snapshot) { rules, auth in
            let now = snapshot.now
            let root = snapshot.root
            guard let newRoot = Self.applying(write, to: root, now: now) else { return false }
            var context = RulesContext(auth: auth, root: root, now: now)
            if feed.isWatched {
                context.explain = true
                let decision = RulesPolicy.authorize(write, rules: rules, context: context, newRoot: newRoot)
                feed.publish(namespace: namespace, operation: "onDisconnect", path: write.location, auth: auth,
                             decision: decision, time: now)
                if !decision.allowed {
                    explainer?.explain(decision, "onDisconnect write", write.location, auth: auth, caller: caller)
                }
                return decision.allowed
            }
            guard !RulesPolicy.authorize(write, rules: rules, context: context, newRoot: newRoot).allowed else {
                return true
            }
            if let explainer {
                context.explain = true
                explainer.explain(RulesPolicy.authorize(write, rules: rules, context: context, newRoot: newRoot),
                                  "onDisconnect write", write.location, auth: auth, caller: caller)
            }
            return false
        }
    }

    /// `root` with `write` applied, server values resolved with `now`; `nil` when a value cannot be resolved.
    private static func applying(_ write: StoreWrite, to root: Node, now: Double) -> Node? {
        var result = root
        func place(_ value: WriteValue, at target: WriteTarget) -> Bool {
            let location = target.location
            guard let node = try? value.resolved(timestamp: now, existing: { root.descendant(at: location.appending($0)) })
            else { return false }
            switch target {
            case .node(let path): result.set(node, at: path)
            case .priority(of: let path):
                let priority: Priority?
                switch node.leafValue {
                case .number(let number)?: priority = .number(number)
                case .string(let text)?: priority = .string(text)
                case nil: priority = nil
                case .bool?: return false
                }
                result.modifyDescendant(at: path) { $0.setPriority(priority) }
            }
            return true
        }
        switch write {
        case .set(let target, let value, _):
            guard place(value, at: target) else { return nil }
        case .push:
            return nil  // only the store names a push's child; onDisconnect operations are sets and updates
        case .update(let base, let entries):
            for entry in entries where !place(entry.value, at: entry.target.below(base)) { return nil }
        }
        return result
    }
}
