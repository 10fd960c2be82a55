import HTTPServer
import Transport
import WebSocket
import Wire

/// A wire connection that may not go on: it sends the protocol's shutdown message with the reason, which the SDKs
/// log and treat as final (they stop reconnecting), then closes with 1008.
final class RefusedSession: WebSocketSessionDelegate {
    private let reason: String

    init(reason: String) {
        self.reason = reason
    }

    func webSocketSessionDidOpen(_ session: WebSocketSession) {
        if let frames = try? FrameSplitter.frames(for: ServerMessage.shutdown(reason: reason).encoded()) {
            for frame in frames { session.send(.text(frame)) }
        }
        session.close(code: 1008, reason: "namespace refused")
    }

    func webSocketSession(_ session: WebSocketSession, didReceive message: WebSocketMessage) {}

    func webSocketSessionDidClose(_ session: WebSocketSession, reason: CloseReason) {}
}
