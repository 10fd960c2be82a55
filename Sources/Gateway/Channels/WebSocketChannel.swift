import HTTPServer
import Primitives
import Transport
import WebSocket
import Wire

/// A wire session on its own WebSocket: the common case, on the WebSocket connection's loop.
///
/// It reassembles the protocol's split messages (wire-protocol.md §2) and cuts large outbound ones into frames.
final class WebSocketChannel: WireChannel, WebSocketSessionDelegate {
    let webSocket: WebSocketSession
    /// The session it carries; released when the WebSocket closes, which breaks the cycle.
    var session: WireSession?
    private var assembler = FrameAssembler()

    init(webSocket: WebSocketSession) {
        self.webSocket = webSocket
    }

    var transport: WireTransport { .webSocket }
    var isClosed: Bool { webSocket.isClosed }
    var pendingOutboundBytes: Int { webSocket.pendingOutboundBytes }

    func send(message: [UInt8]) -> Bool {
        guard let frames = try? FrameSplitter.frames(for: message) else { return false }
        for frame in frames { webSocket.send(.text(frame)) }
        return true
    }

    func send(sharedFrames: ByteChunk) { webSocket.sendFrame(sharedFrames) }
    func flushNow() { webSocket.flushNow() }
    func pauseReading() { webSocket.pauseReading() }
    func resumeReading() { webSocket.resumeReading() }
    func close(code: UInt16, reason: String) { webSocket.close(code: code, reason: reason) }
    var webSocketForFanOut: WebSocketSession? { webSocket }

    // MARK: - WebSocket events

    func webSocketSessionDidOpen(_ webSocket: WebSocketSession) {
        session?.open()
    }

    func webSocketSession(_ webSocket: WebSocketSession, didReceive message: WebSocketMessage) {
        guard let session else { return }
        guard case .text(let frame) = message else {
            webSocket.close(code: 1003, reason: "the protocol uses text frames only")
            return
        }
        switch WireFrames.assemble(frame, with: &assembler) {
        case .none: break
        case .message(let bytes): session.receive(bytes)
        case .failure(let error): session.receiveFailed(error)
        }
    }

    func webSocketSessionDidDrain(_ webSocket: WebSocketSession) {
        session?.drained()
    }

    func webSocketSessionDidClose(_ webSocket: WebSocketSession, reason: CloseReason) {
        let session = self.session
        self.session = nil
        session?.closed()
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
