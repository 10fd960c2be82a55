/// A successful server handshake: what to put in the `101` response and how to set up the connection.
public struct WebSocketHandshakeAcceptance {
    /// The status code of the response (`101 Switching Protocols`).
    public static let statusCode = 101
    /// Response headers: `Upgrade`, `Connection`, `Sec-WebSocket-Accept`, and when negotiated
    /// `Sec-WebSocket-Protocol` and `Sec-WebSocket-Extensions`.
    public var headers: [(name: String, value: String)]
    /// The chosen subprotocol, if any.
    public var subprotocol: String?
    /// The `Sec-WebSocket-Extensions` response value, if an extension was accepted.
    public var extensionResponse: String?
    /// The codec for the accepted extension; pass it to ``WebSocketConnectionStateMachine/init(role:limits:codec:)``.
    public var codec: (any WebSocketMessageCodec)?
}
