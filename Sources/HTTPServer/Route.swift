import HTTP1

/// What the server does with a request, as decided by a ``Router``.
public enum Route: Sendable {
    /// Send this response (the connection stays open when keep-alive allows).
    case respond(HTTPResponse)
    /// Upgrade to WebSocket; `makeDelegate` is called on the connection's loop once the 101 is sent.
    case webSocket(makeDelegate: @Sendable (WebSocketSession) -> any WebSocketSessionDelegate)
    /// Answer later: `answer` receives a ``PendingResponse`` to complete from any thread, exactly once. Requests
    /// pipelined behind this one wait, so responses leave in request order (RFC 9112 §9.3.2).
    case deferred(_ answer: @Sendable (PendingResponse) -> Void)
    /// Start a streaming response (server-sent events): `head` is sent, then `start` receives the
    /// stream on the connection's loop. The connection carries nothing else afterwards.
    case stream(head: HTTPResponseHead, start: @Sendable (ResponseStream) -> Void)
}

/// Facts about the connection a request came in on, for routing decisions.
public struct RequestContext: Sendable {
    /// The peer's address as text.
    public var remoteAddress: String
    /// Whether the request arrived over TLS.
    public var isSecure: Bool
}

/// Maps requests to routes; the gateway implements it for REST, SSE and `/.ws`.
public protocol Router: Sendable {
    /// Decides what to do with `request`. Called on the connection's loop; must not block.
    func route(_ request: HTTPRequest, context: RequestContext) -> Route
}
