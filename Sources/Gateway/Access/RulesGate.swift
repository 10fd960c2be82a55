import DataModel
import Logging
import Rules
import Store

/// The security-rules decisions for one caller (a wire session, a REST request, an event stream) in one namespace
/// (security-rules.md): reads when they arrive, writes inside the store while they are applied (against the whole
/// tree as it is then), onDisconnect operations when they are registered. The admin credential bypasses rules;
/// without rules everything is allowed. With `explainDenials`, every denial is logged with each rule tried.
struct RulesGate: Sendable {
    let gateway: Gateway
    let namespace: Namespace
    /// The rules' `auth`, or `nil` for the admin.
    let auth: JSONValue??
    /// Names the caller in denial explanations (`session …`, `REST 127.0.0.1:…`).
    let caller: String

    init(gateway: Gateway, namespace: Namespace, identity: ConnectionIdentity, caller: String) {
        self.gateway = gateway
        self.namespace = namespace
        self.auth = identity.rulesAuth
        self.caller = caller
    }

    /// The rules to apply and the `auth` they see, `nil` when nothing is checked.
    private var enforced: (rules: RuleSet, auth: JSONValue?)? {
        guard let rules = gateway.configuration.rules.rules, case .some(let auth) = auth else { return nil }
        return (rules, auth)
    }

    /// Whether the caller may read `path` with `query` (`nil`: the whole location) now.
    func mayRead(_ path: Path, query: QueryParams?) -> Bool {
        guard let (rules, auth) = enforced else { return true }
        var context = RulesContext(
            auth: auth, root: namespace.store.wholeTreeSnapshot ?? .empty, now: gateway.configuration.clock())
        guard !rules.authorizeRead(at: path, query: query, context: context).allowed else { return true }
        if gateway.configuration.explainDenials {
            context.explain = true
            explain(rules.authorizeRead(at: path, query: query, context: context), "read", path, auth: auth)
        }
        return false
    }

    /// The authorizer the store runs for the caller's writes, `nil` when nothing is checked.
    func writeAuthorizer() -> WriteAuthorizer? {
        guard let (rules, auth) = enforced else { return nil }
        let explaining = gateway.configuration.explainDenials
        return { authorization in
            var context = RulesContext(auth: auth, root: authorization.oldRoot, now: authorization.timestamp)
            let write = authorization.write
            let decision = Self.authorize(write, rules: rules, context: context, newRoot: authorization.newRoot)
            if !decision.allowed, explaining {
                context.explain = true
                let explained = Self.authorize(write, rules: rules, context: context, newRoot: authorization.newRoot)
                explain(explained, "write", write.location, auth: auth)
            }
            return decision.allowed
        }
    }

    /// Whether an onDisconnect operation may be registered: the write judged against the tree as it is now, with
    /// its server values resolved at this moment.
    func mayRegister(_ write: StoreWrite) -> Bool {
        guard let (rules, auth) = enforced else { return true }
        let now = gateway.configuration.clock()
        let root = namespace.store.wholeTreeSnapshot ?? .empty
        guard let newRoot = Self.applying(write, to: root, now: now) else { return false }
        var context = RulesContext(auth: auth, root: root, now: now)
        guard !Self.authorize(write, rules: rules, context: context, newRoot: newRoot).allowed else { return true }
        if gateway.configuration.explainDenials {
            context.explain = true
            explain(Self.authorize(write, rules: rules, context: context, newRoot: newRoot), "onDisconnect write",
                    write.location, auth: auth)
        }
        return false
    }

    /// Logs why an operation was denied: the path, the uid and each rule tried on the way down (`--explain-denials`).
    private func explain(_ decision: RulesDecision, _ operation: String, _ path: Path, auth: JSONValue?) {
        let uid = auth?["uid"]?.stringValue ?? "null"
        let steps = decision.trace.map { "\n  \($0)" }.joined()
        gateway.logger.notice("denied \(operation) at \(path) for uid \(uid) (\(caller)):\(steps)")
    }

    private static func authorize(_ write: StoreWrite, rules: RuleSet, context: RulesContext, newRoot: Node)
        -> RulesDecision
    {
        switch write {
        case .set(let target, _, _):
            return rules.authorizeWrite(at: target.location, context: context, newRoot: newRoot)
        case .update(let path, let entries):
            return rules.authorizeUpdate(
                at: path, changedPaths: entries.map(\.target.location), context: context, newRoot: newRoot)
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
        case .update(let base, let entries):
            for entry in entries where !place(entry.value, at: entry.target.below(base)) { return nil }
        }
        return result
    }
}

extension StoreWrite {
    /// The location a write is addressed to (an update's base path).
    var location: Path {
        switch self {
        case .set(let target, _, _): return target.location
        case .update(let path, _): return path
        }
    }
}
