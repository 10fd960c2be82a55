/// How a WebSocket connection ended, reported with ``WebSocketConnectionStateMachine/Action/closeConnection(_:)``
/// for logs and metrics.
public enum WebSocketClosure: Sendable, Hashable {
    /// The close handshake completed (RFC 6455 §7.1.3).
    /// - Parameters:
    ///   - peerCode: The code in the peer's close frame, or `nil` if its close frame carried none.
    ///   - peerReason: The peer's reason (valid UTF-8, possibly empty).
    ///   - initiatedLocally: Whether this side sent its close frame first (``WebSocketConnectionStateMachine/close(code:reason:)``).
    case handshakeCompleted(peerCode: WebSocketCloseCode?, peerReason: String, initiatedLocally: Bool)
    /// This side failed the connection (RFC 6455 §7.1.7); unless a close frame had already been sent, a close frame
    /// carrying ``WebSocketProtocolError/closeCode`` was emitted just before.
    case failed(WebSocketProtocolError)
}
