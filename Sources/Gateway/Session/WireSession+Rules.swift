import DataModel
import Store
import Wire

/// Security-rules checks for one connection, through a ``RulesGate`` for its current identity.
extension WireSession {
    /// The rules gate for the connection's identity now.
    var rulesGate: RulesGate {
        RulesGate(gateway: gateway, namespace: namespace, identity: identity, caller: "session \(sessionID)")
    }

    /// Whether the connection may read `path` with `query` (`nil`: the whole location) now.
    func mayRead(_ path: Path, query: QueryParams?) -> Bool {
        rulesGate.mayRead(path, query: query)
    }

    /// Re-checks every listen after the rules or the connection's identity changed, revoking (`c`) those it may no
    /// longer read (wire-protocol.md §11: a tagged listen's `q` is sent back as the client sent it).
    func recheckListens() {
        let gate = rulesGate
        for (key, subscription) in listens where !gate.mayRead(subscription.path, query: subscription.filter) {
            listens[key] = nil
            detach(subscription)
            send(.listenRevoked(path: subscription.path, query: subscription.queryObject))
        }
    }
}
