import HTTP1

/// What the server does with a request, as decided by a ``Router``.
public enum Route: Sendable {
    /// Send this response (the connection stays open when keep-alive allows).
    case respond(HTTPResponse)
    /// Upgrade to WebSocket; `makeDelegate` is called on the connection's loop once the 101 is sent.
    case webSocket(makeDelegate: @Sendable (WebSocketSession) -> any WebSocketSessionDelegate)
    /// Answer later: `answer` receives a ``PendingResponse`` to complete from any thread, exactly once. Requests
    /// pipelined behind this one wait until it is answered; responses always leave in request order (RFC 9112
    /// §9.3.2).
    case deferred(_ answer: @Sendable (PendingResponse) -> Void)
    /// Answer later, like ``deferred(_:)``, but `answer` places the request's effect in `order` when it is called:
    /// requests pipelined behind this one may then be routed before it is answered (see
    /// ``RequestContext/unansweredAhead``). The server calls `answer` at once, or, when earlier requests placed in
    /// another order are still unanswered, once they are.
    case ordered(PipelineOrder, _ answer: @Sendable (PendingResponse) -> Void)
    /// Route the request again once every earlier request on its connection is answered: for a router that cannot
    /// order it behind them (``RequestContext/unansweredAhead``), and would answer from state at once.
    case routeWhenAnswered
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
    /// When earlier requests on this connection are still owed answers (HTTP pipelining), the order they were all
    /// placed in (``Route/ordered(_:_:)``); `nil` when every earlier request is answered.
    ///
    /// A router must then not answer from state at once (``Route/respond(_:)``), which would not reflect those
    /// requests' effects: it places the request behind them with ``Route/ordered(_:_:)`` in this order, or returns
    /// a route the server starts only once the earlier answers are sent (``Route/deferred(_:)``,
    /// ``Route/webSocket(makeDelegate:)``, ``Route/stream(head:start:)``, or ``Route/ordered(_:_:)`` in another
    /// order). Answers that depend on no state (refusals of malformed requests) may be given at once.
    public var unansweredAhead: PipelineOrder?
}

/// An order that requests take effect in, such as one namespace's sequence of operations: a request placed in it
/// takes effect after every request placed in it before. HTTP pipelining relies on it (``Route/ordered(_:_:)``).
public struct PipelineOrder: Hashable, Sendable {
    /// What names the order, such as a namespace's name.
    public let name: String

    /// The order named `name`.
    public init(_ name: String) {
        self.name = name
    }
}

/// Maps requests to routes; the gateway implements it for REST, SSE and `/.ws`.
public protocol Router: Sendable {
    /// Decides what to do with `request`. Called on the connection's loop; must not block.
    func route(_ request: HTTPRequest, context: RequestContext) -> Route
}
