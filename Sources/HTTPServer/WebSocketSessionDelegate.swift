import Transport
import WebSocket

/// What the gateway implements to receive one WebSocket session's events (on the session's loop).
public protocol WebSocketSessionDelegate: AnyObject {
    /// The upgrade completed; the session can send.
    func webSocketSessionDidOpen(_ session: WebSocketSession)
    /// A complete text or binary message arrived (already reassembled, inflated and validated).
    func webSocketSession(_ session: WebSocketSession, didReceive message: WebSocketMessage)
    /// Pending outbound bytes fell back below the low-water mark.
    func webSocketSessionDidDrain(_ session: WebSocketSession)
    /// The session ended; `reason` tells why (peer close, error, slow consumer, shutdown).
    func webSocketSessionDidClose(_ session: WebSocketSession, reason: CloseReason)
}

extension WebSocketSessionDelegate {
    public func webSocketSessionDidOpen(_ session: WebSocketSession) {}
    public func webSocketSessionDidDrain(_ session: WebSocketSession) {}
}
