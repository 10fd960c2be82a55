import DataModel
import Store
import Transport
import Wire

/// Security-rules checks for one connection, through a ``RulesGate`` for its current identity.
extension WireSession {
    /// The rules gate for the connection's identity now.
    var rulesGate: RulesGate {
        RulesGate(identity: identity, caller: "session \(sessionID)")
    }

    /// Re-checks every listen after the rules or the connection's identity changed, at that change's place in the
    /// namespace's order, revoking (`c`) those it may no longer read (wire-protocol.md §11: a tagged listen's `q`
    /// is sent back as the client sent it).
    func recheckListens() {
        guard !listens.isEmpty else { return }
        let gate = rulesGate
        let current = listens.subscriptions
        namespace.store.inOrder { [self] snapshot in
            let revoked = current.filter { !gate.mayRead($0.path, query: $0.filter, in: snapshot) }
            guard !revoked.isEmpty else { return }
            loop.execute {
                for subscription in revoked where self.listens.remove(subscription) {
                    self.detach(subscription)
                    self.send(.listenRevoked(path: subscription.path, query: subscription.queryObject))
                }
                self.loop.flushPending()
            }
        }
    }
}
