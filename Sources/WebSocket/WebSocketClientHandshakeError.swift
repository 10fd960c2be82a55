/// Why a client refuses the server's handshake response (RFC 6455 §4.1); the client then closes the TCP connection.
public enum WebSocketClientHandshakeError: Error, Hashable, Sendable {
    /// The status is not `101 Switching Protocols`.
    case unexpectedStatus(Int)
    /// `Upgrade` does not contain `websocket`.
    case missingUpgradeWebSocket
    /// `Connection` does not contain `Upgrade`.
    case missingConnectionUpgrade
    /// `Sec-WebSocket-Accept` is missing or does not match the key.
    case acceptMismatch
    /// The server selected a subprotocol the client did not offer (or several).
    case unexpectedSubprotocol(String)
    /// `Sec-WebSocket-Extensions` is present but unparseable.
    case malformedExtensions
    /// The response is not an HTTP response head.
    case malformedResponse(String)
}
