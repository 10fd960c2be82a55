import Auth
import DataModel
import Rules
import Store
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
        guard let rules = gateway.configuration.rules, case .some(let auth) = rulesAuth else { return true }
        let context = RulesContext(
            auth: auth, root: namespace.store.wholeTreeSnapshot ?? .empty, now: gateway.configuration.clock())
        return rules.authorizeRead(at: path, query: query, context: context).allowed
    }

    /// The authorizer the store runs for this connection's writes, `nil` when nothing is checked.
    func writeAuthorizer() -> WriteAuthorizer? {
        guard let rules = gateway.configuration.rules, case .some(let auth) = rulesAuth else { return nil }
        return { authorization in
            let context = RulesContext(auth: auth, root: authorization.oldRoot, now: authorization.timestamp)
            return Self.authorize(authorization.write, rules: rules, context: context, newRoot: authorization.newRoot)
        }
    }

    /// Whether an onDisconnect operation may be registered: the write judged against the tree as it is now, with
    /// its server values resolved at this moment.
    func mayRegister(_ write: StoreWrite) -> Bool {
        guard let rules = gateway.configuration.rules, case .some(let auth) = rulesAuth else { return true }
        let now = gateway.configuration.clock()
        let root = namespace.store.wholeTreeSnapshot ?? .empty
        guard let newRoot = Self.applying(write, to: root, now: now) else { return false }
        return Self.authorize(write, rules: rules, context: RulesContext(auth: auth, root: root, now: now),
                              newRoot: newRoot)
    }

    private static func authorize(_ write: StoreWrite, rules: RuleSet, context: RulesContext, newRoot: Node) -> Bool {
        switch write {
        case .set(let target, _, _):
            return rules.authorizeWrite(at: target.location, context: context, newRoot: newRoot).allowed
        case .update(let path, let entries):
            return rules.authorizeUpdate(
                at: path, changedPaths: entries.map(\.target.location), context: context, newRoot: newRoot
            ).allowed
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
