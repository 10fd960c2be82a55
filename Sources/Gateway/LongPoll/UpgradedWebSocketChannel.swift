import HTTPServer
import Primitives
import Synchronization
import Transport
import WebSocket
import Wire

/// A WebSocket taking over a long-poll session (long-polling.md §7).
///
/// The WebSocket belongs to its connection's loop, the session to its own; everything crossing between them hops,
/// in order. Before the switch it answers the SDK's pings itself and keeps the client's data messages; at the switch
/// the session gets those, after everything the long poll brought.
final class UpgradedWebSocketChannel: WireChannel, WebSocketSessionDelegate, @unchecked Sendable {
    private let webSocket: WebSocketSession
    private let longPoll: LongPollChannel
    private var sessionLoop: EventLoop { longPoll.loop }

    // The WebSocket's loop:
    private var assembler = FrameAssembler()

    // The session's loop:
    /// The session, once it moved here.
    private var session: WireSession?
    /// Data messages that arrived before the switch, and their bytes (bounded).
    private var waiting: [[UInt8]] = []
    private var waitingBytes = 0

    // Shared:
    private let closing = Atomic<Bool>(false)
    /// Bytes handed to the WebSocket's loop that it has not given to the socket yet.
    private let queuedBytes = Atomic<Int>(0)
    /// The socket's unwritten bytes, as its loop last saw them.
    private let socketPendingBytes = Atomic<Int>(0)

    /// Most bytes of data messages kept before the switch (the SDK sends none until it switched; only a hostile
    /// client reaches it).
    static let maxWaitingBytes = 16 << 20

    init(webSocket: WebSocketSession, longPoll: LongPollChannel) {
        self.webSocket = webSocket
        self.longPoll = longPoll
    }

    // MARK: - WebSocket events (on the WebSocket's loop)

    func webSocketSessionDidOpen(_ webSocket: WebSocketSession) {
        webSocket.send(.text(UpgradeControl.switchAck))
        sessionLoop.execute { [self] in longPoll.offerSecondary(self) }
    }

    func webSocketSession(_ webSocket: WebSocketSession, didReceive message: WebSocketMessage) {
        guard case .text(let frame) = message else {
            return webSocket.close(code: 1003, reason: "the protocol uses text frames only")
        }
        switch WireFrames.assemble(frame, with: &assembler) {
        case .none: break
        case .message(let bytes): sessionLoop.execute { [self] in received(bytes) }
        case .failure(let error): sessionLoop.execute { [self] in receiveFailed(error) }
        }
    }

    func webSocketSessionDidDrain(_ webSocket: WebSocketSession) {
        socketPendingBytes.store(webSocket.pendingOutboundBytes, ordering: .relaxed)
        sessionLoop.execute { [self] in session?.drained() }
    }

    func webSocketSessionDidClose(_ webSocket: WebSocketSession, reason: CloseReason) {
        closing.store(true, ordering: .relaxed)
        sessionLoop.execute { [self] in
            if let session {
                self.session = nil
                session.closed()
            } else {
                waiting.removeAll()
                longPoll.secondaryClosed(self)
            }
        }
    }

    // MARK: - The switch (on the session's loop)

    private func received(_ message: [UInt8]) {
        if let session { return session.receive(message) }
        switch try? ClientMessage.parse(message) {
        case .control(.ping)?:
            _ = send(message: ServerMessage.pong.encoded())
        case .control?:
            break  // the client's switch ack: the long poll's `n` decides
        default:
            waitingBytes += message.count
            guard waitingBytes <= Self.maxWaitingBytes else {
                return close(code: 1008, reason: "too much data before the switch")
            }
            waiting.append(message)
        }
    }

    private func receiveFailed(_ error: WireError) {
        if let session { return session.receiveFailed(error) }
        close(code: 1002, reason: String(error.description.utf8.prefix(120)) ?? "protocol error")
    }

    /// The session moves here: it first gets the long poll's unread messages, then what arrived here meanwhile.
    func attach(_ session: WireSession, receivedBefore unread: [[UInt8]]) {
        self.session = session
        let pending = unread + waiting
        waiting.removeAll()
        waitingBytes = 0
        for message in pending { session.receive(message) }
    }

    /// The long poll will not move here (it ended, or another WebSocket is taking it over).
    func refuse() {
        abandon()
    }

    /// Ends this WebSocket without the session: a reset, on which the SDK abandons the upgrade.
    func abandon() {
        guard !closing.exchange(true, ordering: .relaxed) else { return }
        let reset = ServerMessage.reset(host: "").encoded()
        webSocket.loop.execute { [webSocket] in
            webSocket.send(.text(reset))
            webSocket.close(code: 1000, reason: "no long-poll session to take over")
        }
    }

    // MARK: - WireChannel (on the session's loop)

    var transport: WireTransport { .webSocket }
    var isClosed: Bool { closing.load(ordering: .relaxed) }

    var pendingOutboundBytes: Int {
        queuedBytes.load(ordering: .relaxed) + socketPendingBytes.load(ordering: .relaxed)
    }

    func send(message: [UInt8]) -> Bool {
        guard let frames = try? FrameSplitter.frames(for: message) else { return false }
        let bytes = message.count
        queuedBytes.add(bytes, ordering: .relaxed)
        webSocket.loop.execute { [self] in
            for frame in frames { webSocket.send(.text(frame)) }
            handedOver(bytes)
        }
        return true
    }

    func send(sharedFrames: ByteChunk) {
        let chunk = sharedFrames
        queuedBytes.add(chunk.count, ordering: .relaxed)
        webSocket.loop.execute { [self] in
            webSocket.sendFrame(chunk)
            handedOver(chunk.count)
        }
    }

    /// On the WebSocket's loop: `bytes` reached the socket's queue.
    private func handedOver(_ bytes: Int) {
        queuedBytes.subtract(bytes, ordering: .relaxed)
        socketPendingBytes.store(webSocket.pendingOutboundBytes, ordering: .relaxed)
    }

    func flushNow() {
        webSocket.loop.execute { [self] in
            webSocket.flushNow()
            socketPendingBytes.store(webSocket.pendingOutboundBytes, ordering: .relaxed)
        }
    }

    func pauseReading() {
        webSocket.loop.execute { [webSocket] in webSocket.pauseReading() }
    }

    func resumeReading() {
        webSocket.loop.execute { [webSocket] in webSocket.resumeReading() }
    }

    func close(code: UInt16, reason: String) {
        closing.store(true, ordering: .relaxed)
        webSocket.loop.execute { [webSocket] in webSocket.close(code: code, reason: reason) }
    }
}

/// The two control messages of the switch that only the long-poll transport uses (long-polling.md §7).
enum UpgradeControl {
    /// The server's switch ack, the first message on a WebSocket taking a session over.
    static let switchAck = Array(#"{"t":"c","d":{"t":"a","d":{}}}"#.utf8)
    /// End of transmission: the long poll's last message, both ways.
    static let endOfTransmission = Array(#"{"t":"c","d":{"t":"n","d":{}}}"#.utf8)

    /// Whether the client's `message` is its end of transmission.
    static func isEndOfTransmission(_ message: [UInt8]) -> Bool {
        guard message.count < 64 else { return false }
        if case .control(.endOfTransmission)? = try? ClientMessage.parse(message) { return true }
        return false
    }
}
