import DataModel

/// One complete message from a client (wire-protocol.md §3, §5, §6); keepalives never get this far (see
/// ``FrameAssembler``).
///
/// Parse with ``parse(_:limits:)``; encode (for protocol test clients and load testers) with ``encoded()``.
public enum ClientMessage: Sendable, Equatable {
    /// A control message (`{"t":"c",...}`).
    case control(ClientControl)
    /// A data request (`{"t":"d","d":{"r":...,"a":...,"b":...}}`).
    case request(ClientRequest)
}

/// Control messages clients send (§3.3).
public enum ClientControl: Sendable, Equatable {
    /// Health ping (JS, before the connection counts as healthy); answer with ``ServerMessage/pong``.
    case ping
    /// Long-poll → WebSocket switch acknowledgement (only with long polling).
    case switchAck
    /// Long-poll end of transmission (only with long polling).
    case endOfTransmission
}

/// A numbered request (§5.1, §6).
public struct ClientRequest: Sendable, Equatable {
    /// The client's request number, echoed in the response (JS starts at 1, Android and iOS at 0).
    public var number: Int
    /// What the client asks for.
    public var action: ClientAction

    /// Creates a request.
    public init(number: Int, action: ClientAction) {
        self.number = number
        self.action = action
    }
}

/// Every action current SDKs send (§6.1), with the SDKs' spelling variants folded together.
public enum ClientAction: Sendable, Equatable {
    /// `s`: connection stats (`c` counters); reply `ok`, content may be discarded.
    case stats(counters: JSONValue)
    /// `auth` / `gauth`: authenticate.
    case auth(AuthRequest)
    /// `unauth`: drop credentials and re-evaluate listens as unauthenticated.
    case unauth
    /// `appcheck`: an App Check token.
    case appCheck(token: String)
    /// `unappcheck` (Android) / `unappeck` (JS): drop the App Check token.
    case unappCheck
    /// `q` (legacy `l`): listen.
    case listen(ListenRequest)
    /// `n` (legacy `u`): unlisten.
    case unlisten(UnlistenRequest)
    /// `p`: put (set), optionally compare-and-set.
    case put(PutRequest)
    /// `m`: merge (update).
    case merge(MergeRequest)
    /// `o`: remember a put to run when the connection drops.
    case onDisconnectPut(PutRequest)
    /// `om`: remember a merge to run when the connection drops.
    case onDisconnectMerge(MergeRequest)
    /// `oc`: forget remembered operations at and below a path.
    case onDisconnectCancel(path: Path)
    /// `g`: one-shot read.
    case get(GetRequest)

    /// The canonical wire action name (for logs and metrics labels).
    public var name: String {
        switch self {
        case .stats: return WireKey.statsAction
        case .auth(let request): return request.method == .gauth ? WireKey.gauthAction : WireKey.authAction
        case .unauth: return WireKey.unauthAction
        case .appCheck: return WireKey.appCheckAction
        case .unappCheck: return WireKey.unappCheckAction
        case .listen: return WireKey.listenAction
        case .unlisten: return WireKey.unlistenAction
        case .put: return WireKey.putAction
        case .merge: return WireKey.mergeAction
        case .onDisconnectPut: return WireKey.onDisconnectPutAction
        case .onDisconnectMerge: return WireKey.onDisconnectMergeAction
        case .onDisconnectCancel: return WireKey.onDisconnectCancelAction
        case .get: return WireKey.getAction
        }
    }
}
