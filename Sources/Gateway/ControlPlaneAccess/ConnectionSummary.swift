import Auth
import DataModel

/// A live wire connection as the control plane lists it (`/.inspect/connections.json`).
public struct ConnectionSummary: Sendable {
    /// One listen of the connection.
    public struct Listen: Sendable {
        /// The location listened to.
        public let path: String
        /// The query, as the client sent it (`nil`: the whole location).
        public let query: JSONValue?
    }

    /// The session id.
    public let id: String
    /// The namespace it is connected to.
    public let namespace: String
    /// `websocket` or `longpoll`.
    public let transport: String
    /// Who it is: `null` unauthenticated, `"admin"`, or the rules' `auth` (a user's claims, an admin's override).
    public let auth: JSONValue
    /// Its listens, by path.
    public let listens: [Listen]

    /// `session` now (on its loop: its listens and identity belong to it).
    init(_ session: WireSession) {
        id = session.sessionID
        namespace = session.namespace.name
        transport = session.channel.transport.rawValue
        switch session.identity {
        case .unauthenticated: auth = .null
        case .admin: auth = .string("admin")
        case .user(let user): auth = user.ruleVariable
        case .override(let variable): auth = variable ?? .null
        }
        listens = session.listens.subscriptions.sorted { $0.path.description < $1.path.description }.map { subscription in
            Listen(path: subscription.path.description, query: subscription.queryObject)
        }
    }
}
