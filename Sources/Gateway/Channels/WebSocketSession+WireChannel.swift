import HTTPServer
import Primitives
import Transport
import WebSocket
import Wire

/// A wire session on its own WebSocket, the common case: the WebSocket is the session's channel, and the session is
/// the WebSocket's delegate, both on the WebSocket connection's loop. No object stands between them, which an idle
/// connection would pay for.
///
/// The session reassembles the protocol's split messages (wire-protocol.md §2) with its ``WireSession/assembler``;
/// large outbound ones are cut into frames here.
extension WebSocketSession: WireChannel {
    var transport: WireTransport { .webSocket }

    func send(message: [UInt8]) -> Bool {
        guard let frames = try? FrameSplitter.frames(for: message) else { return false }
        for frame in frames { send(.text(frame)) }
        return true
    }

    func send(sharedFrames: ByteChunk) { sendFrame(sharedFrames) }
    var webSocketForFanOut: WebSocketSession? { self }
}

extension WireSession: WebSocketSessionDelegate {
    func webSocketSessionDidOpen(_ webSocket: WebSocketSession) {
        open()
    }

    func webSocketSession(_ webSocket: WebSocketSession, didReceive message: WebSocketMessage) {
        guard case .text(let frame) = message else {
            webSocket.close(code: 1003, reason: "the protocol uses text frames only")
            return
        }
        switch WireFrames.assemble(frame, with: &assembler) {
        case .none: break
        case .message(let bytes): receive(bytes)
        case .failure(let error): receiveFailed(error)
        }
    }

    func webSocketSessionDidDrain(_ webSocket: WebSocketSession) {
        drained()
    }

    func webSocketSessionDidClose(_ webSocket: WebSocketSession, reason: CloseReason) {
        closed()
    }
}

/// Turning WebSocket text messages into wire messages, for the channels that read WebSockets.
enum WireFrames {
    enum Assembled {
        /// A piece of a split message: nothing to hand on yet.
        case none
        case message([UInt8])
        case failure(WireError)
    }

    /// Feeds one WebSocket text message to `assembler`.
    static func assemble(_ frame: [UInt8], with assembler: inout FrameAssembler) -> Assembled {
        do {
            guard case .message(let bytes) = try assembler.receive(frame) else { return .none }
            return .message(bytes)
        } catch {
            return .failure(error)
        }
    }
}
