import Transport
import WebSocket

/// Echoes every message back on the same session; the conformance suite's peer (off by default).
final class EchoEndpoint: WebSocketSessionDelegate {
    func webSocketSession(_ session: WebSocketSession, didReceive message: WebSocketMessage) {
        session.send(message)
    }

    func webSocketSessionDidClose(_ session: WebSocketSession, reason: CloseReason) {}
}
