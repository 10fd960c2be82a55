import Auth
import DataModel
import Logging
import Rules
import Store
import Transport
import Wire

/// Security-rules checks for one connection (security-rules.md): reads when a listen or get arrives, writes inside
/// the store while they are applied (against the whole tree as it is then), onDisconnect operations when they are
/// registered. The admin credential bypasses rules; without a rules file everything is allowed.
extension WireSession {
    /// The rules' `auth` for this connection, or `nil` for the admin (who bypasses rules).
    private var rulesAuth: JSONValue?? {
        switch identity {
        case .admin: return nil
        case .unauthenticated: return .some(nil)
        case .user(let user): return .some(user.ruleVariable)
        case .override(let variable): return .some(variable)
        }
    }

    /// Whether the connection may read `path` with `query` (`nil`: the whole location) now.
    func mayRead(_ path: Path, query: QueryParams?) -> Bool {
        guard let rules = gateway.configuration.rules.rules, case .some(let auth) = rulesAuth else { return true }
        var context = RulesContext(
            auth: auth, root: namespace.store.wholeTreeSnapshot ?? .empty, now: gateway.configuration.clock())
        guard !rules.authorizeRead(at: path, query: query, context: context).allowed else { return true }
        if gateway.configuration.explainDenials {
            context.explain = true
            explain(rules.authorizeRead(at: path, query: query, context: context), "read", path, auth: auth)
        }
        return false
    }

    /// The authorizer the store runs for this connection's writes, `nil` when nothing is checked.
    func writeAuthorizer() -> WriteAuthorizer? {
        guard let rules = gateway.configuration.rules.rules, case .some(let auth) = rulesAuth else { return nil }
        let explainer = gateway.configuration.explainDenials ? DenialExplainer(session: self) : nil
        return { authorization in
            var context = RulesContext(auth: auth, root: authorization.oldRoot, now: authorization.timestamp)
            let write = authorization.write
            let decision = Self.authorize(write, rules: rules, context: context, newRoot: authorization.newRoot)
            if !decision.allowed, let explainer {
                context.explain = true
                let explained = Self.authorize(write, rules: rules, context: context, newRoot: authorization.newRoot)
                explainer.explain(explained, "write", write.location, auth: auth)
            }
            return decision.allowed
        }
    }

    /// Whether an onDisconnect operation may be registered: the write judged against the tree as it is now, with
    /// its server values resolved at this moment.
    func mayRegister(_ write: StoreWrite) -> Bool {
        guard let rules = gateway.configuration.rules.rules, case .some(let auth) = rulesAuth else { return true }
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

    /// Re-checks every listen after the rules or the connection's identity changed, revoking (`c`) those it may no
    /// longer read (wire-protocol.md §11: a tagged listen's `q` is sent back as the client sent it).
    func recheckListens() {
        for (key, subscription) in listens where !mayRead(subscription.path, query: subscription.filter) {
            listens[key] = nil
            detach(subscription)
            send(.listenRevoked(path: subscription.path, query: subscription.queryObject))
        }
    }

    /// Logs why an operation was denied: the path, the uid and each rule tried on the way down (`--explain-denials`).
    func explain(_ decision: RulesDecision, _ operation: String, _ path: Path, auth: JSONValue?) {
        let uid = auth?["uid"]?.stringValue ?? "null"
        let steps = decision.trace.map { "\n  \($0)" }.joined()
        gateway.logger.notice("denied \(operation) at \(path) for uid \(uid) (session \(sessionID)):\(steps)")
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

/// Explains denied writes from the store's queue on the session's loop (the session is loop-owned).
private struct DenialExplainer: Sendable {
    let session: WireSession

    func explain(_ decision: RulesDecision, _ operation: String, _ path: Path, auth: JSONValue?) {
        let session = self.session
        session.loop.execute { session.explain(decision, operation, path, auth: auth) }
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
