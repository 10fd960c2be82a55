import HTTPServer
import Transport
import WebSocket
import Wire

/// A wire connection that may not go on: it sends one message saying why, then closes. A refused namespace gets the
/// protocol's shutdown message, which the SDKs log and treat as final (they stop reconnecting), and close 1008; an
/// upgrade naming no long-poll session gets a reset, on which the SDK abandons the upgrade (long-polling.md §7).
final class RefusedSession: WebSocketSessionDelegate {
    private let message: ServerMessage
    private let closeCode: UInt16
    private let closeReason: String

    init(message: ServerMessage, closeCode: UInt16, closeReason: String) {
        self.message = message
        self.closeCode = closeCode
        self.closeReason = closeReason
    }

    func webSocketSessionDidOpen(_ session: WebSocketSession) {
        if let frames = try? FrameSplitter.frames(for: message.encoded()) {
            for frame in frames { session.send(.text(frame)) }
        }
        session.close(code: closeCode, reason: closeReason)
    }

    func webSocketSession(_ session: WebSocketSession, didReceive message: WebSocketMessage) {}

    func webSocketSessionDidClose(_ session: WebSocketSession, reason: CloseReason) {}
}
