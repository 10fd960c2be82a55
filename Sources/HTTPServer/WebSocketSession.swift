import Primitives
import Transport
import WebSocket

/// One open WebSocket connection on the server side, owned by its connection's loop.
///
/// The gateway sends messages (encoded by the session's state machine, compressed when
/// permessage-deflate was negotiated) or pre-encoded shared frames (``sendFrame(_:)``, the
/// encode-once fan-out path), and receives complete messages through its delegate.
///
/// On a plain connection the session is the connection's handler from the upgrade on, and the HTTP side
/// (``ServerConnection``) is released: an idle WebSocket keeps nothing of it. Over TLS the ``ServerConnection`` stays
/// the handler, decrypts and encrypts, and hands the session its events.
public final class WebSocketSession: @unchecked Sendable {
    // Every mutable property is owned by `loop.queue`.

    /// The delegate receiving this session's events.
    public var delegate: (any WebSocketSessionDelegate)?
    /// The loop that owns this session; call every method there.
    public var loop: EventLoop { connection.loop }
    /// Connection id (unique in the process), for logs.
    public var id: UInt64 { connection.id }
    /// The peer's address.
    public var remoteAddress: String { connection.remoteAddress }

    /// The TLS connection's handler, which encrypts what the session sends; `nil` on a plain connection. Strong
    /// while open; released in `transportClosed` to break the cycle with the connection.
    private var tls: ServerConnection?
    /// The transport, for the fan-out path: a `let`, so sending to it takes no reference count (the cycle through
    /// the connection's handler ends when the connection closes).
    private let connection: Connection
    /// The server, for its counters and its record of closed connections.
    private let server: HTTPServer
    private var machine: WebSocketConnectionStateMachine
    private var pingOutstanding = false
    private var closed = false
    /// Whether bytes go to ``connection`` as they are (no TLS); next to the flags above, so it costs no padding.
    private let isPlaintext: Bool

    /// A session on `connection`; `tls` is the connection's handler when it speaks TLS.
    init(connection: Connection, server: HTTPServer, tls: ServerConnection?, machine: WebSocketConnectionStateMachine) {
        self.tls = tls
        self.connection = connection
        self.server = server
        self.isPlaintext = tls == nil
        self.machine = machine
    }

    /// Unwritten outbound bytes on the connection.
    public var pendingOutboundBytes: Int { connection.pendingOutboundBytes }

    /// Whether the session has ended or is closing.
    public var isClosed: Bool { closed }

    /// Stops reading the peer's messages until ``resumeReading()`` (backpressure on a client that asks faster than
    /// it is answered).
    public func pauseReading() {
        loop.assertInLoop()
        if !closed { connection.pauseReading() }
    }

    /// Reads the peer's messages again after ``pauseReading()``.
    public func resumeReading() {
        loop.assertInLoop()
        if !closed { connection.resumeReading() }
    }

    // MARK: - Sending

    /// Sends a message through the state machine (compressed when negotiated and large enough).
    public func send(_ message: WebSocketMessage) {
        loop.assertInLoop()
        guard !isClosed else { return }
        switch message {
        case .text(let payload): write(machine.encodeMessage(payload, opcode: .text))
        case .binary(let payload): write(machine.encodeMessage(payload, opcode: .binary))
        }
    }

    /// Sends complete pre-encoded, unmasked, uncompressed frames (see ``encodeSharedFrame(_:)`` and
    /// ``encodeSharedFrames(_:)``). The same chunk may go to any number of sessions.
    public func sendFrame(_ frame: ByteChunk) {
        loop.assertInLoop()
        guard !closed else { return }
        if isPlaintext { connection.write(frame) } else { tls?.sendPlaintext(frame) }
    }

    /// Writes queued output to the socket now instead of at the end of the loop's pass (for a caller that must
    /// know how much the peer has really not taken yet).
    public func flushNow() {
        loop.assertInLoop()
        connection.flushNow()
    }

    /// Encodes `message` once as an unmasked, uncompressed server frame to share across sessions.
    /// Uncompressed frames are valid on every session, with or without permessage-deflate.
    public static func encodeSharedFrame(_ message: WebSocketMessage) -> ByteChunk {
        switch message {
        case .text(let payload): WebSocketFrameEncoder.encodeChunk(opcode: .text, payload: payload)
        case .binary(let payload): WebSocketFrameEncoder.encodeChunk(opcode: .binary, payload: payload)
        }
    }

    /// Encodes `messages` once, back to back in one chunk, as unmasked, uncompressed server frames to share across
    /// sessions (one push split into several frames travels as one chunk).
    public static func encodeSharedFrames(_ messages: [WebSocketMessage]) -> ByteChunk {
        if messages.count == 1 { return encodeSharedFrame(messages[0]) }
        var bytes: [UInt8] = []
        for message in messages {
            switch message {
            case .text(let payload): bytes += WebSocketFrameEncoder.encode(opcode: .text, payload: payload)
            case .binary(let payload): bytes += WebSocketFrameEncoder.encode(opcode: .binary, payload: payload)
            }
        }
        return ByteChunk(copying: bytes)
    }

    /// Starts the close handshake with `code` and `reason`; the connection closes once the peer
    /// answers (or after a short linger).
    public func close(code: UInt16, reason: String) {
        loop.assertInLoop()
        guard !closed else { return }
        closed = true
        write(machine.close(code: WebSocketCloseCode(rawValue: code), reason: reason))
        closeAfterFlush(reason: .local("websocket close \(code)"))
    }

    // MARK: - Events from the connection

    /// Feeds the machine one message at a time and acts on each before reading on, so the answers to valid
    /// messages leave before the close frame of a bad frame behind them.
    func bytesReceived(_ bytes: UnsafeRawBufferPointer) {
        pingOutstanding = false
        // The machine's actions for the message being handled: reused within the pass, and not kept after it, so
        // that an idle connection holds no buffer for them.
        var actions: [WebSocketConnectionStateMachine.Action] = []
        var offset = 0
        while offset < bytes.count, !closed {
            actions.removeAll(keepingCapacity: true)
            offset += machine.bytesReceived(
                UnsafeRawBufferPointer(rebasing: bytes[offset...]), into: &actions, stoppingAfterMessage: true)
            for action in actions {
                switch action {
                case .message(let message):
                    server.metrics.messagesReceived.increment()
                    delegate?.webSocketSession(self, didReceive: message)
                case .send(let bytes):
                    write(bytes)
                case .closeConnection(let closure):
                    closed = true
                    closeAfterFlush(reason: .local(closure.logDescription))
                }
                if connection.isClosed { return }
            }
        }
    }

    /// No input for an idle period: ping, and close if the previous ping went unanswered.
    func idle() {
        guard !pingOutstanding else {
            connection.close(reason: .idleTimeout)
            return
        }
        pingOutstanding = true
        write(machine.ping())
    }

    /// The peer reads too slowly: drop what it has not started to receive, say why (1008), and
    /// close shortly even if it never reads the close frame.
    func cutOffSlowConsumer() {
        guard !connection.isClosed else { return }
        connection.discardUnstartedOutput()
        closed = true
        write(machine.close(code: .policyViolation, reason: "slow consumer"))
        closeAfterFlush(reason: .slowConsumer, lingerNanoseconds: 500_000_000)
    }

    /// The peer sent faster than its inbound rate limit for too long: close 1008 with the reason.
    func closeForInboundRate() {
        guard !connection.isClosed else { return }
        closed = true
        write(machine.close(code: .policyViolation, reason: "inbound rate limit exceeded"))
        closeAfterFlush(reason: .inboundRateExceeded, lingerNanoseconds: 500_000_000)
    }

    /// Writes bytes the machine encoded: as they are, or through TLS.
    private func write(_ bytes: [UInt8]) {
        guard !connection.isClosed else { return }
        if let tls { tls.sendPlaintext(bytes) } else { connection.write(bytes) }
    }

    /// Closes the connection once its output is out (over TLS after a close_notify).
    private func closeAfterFlush(reason: CloseReason, lingerNanoseconds: UInt64 = 2_000_000_000) {
        if let tls {
            tls.closeAfterFlush(reason: reason, lingerNanoseconds: lingerNanoseconds)
        } else {
            connection.closeAfterFlush(reason: reason, lingerNanoseconds: lingerNanoseconds)
        }
    }

    func transportClosed(reason: CloseReason) {
        closed = true
        tls = nil
        let delegate = self.delegate
        self.delegate = nil
        delegate?.webSocketSessionDidClose(self, reason: reason)
    }
}

/// A plain connection's events, straight from the transport once the session took it over at the upgrade.
extension WebSocketSession: ConnectionHandler {
    public func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) {
        bytesReceived(bytes)
    }

    public func connectionDidBecomeIdle(_ connection: Connection) {
        idle()
    }

    public func connectionDidExceedOutboundLimit(_ connection: Connection) {
        server.metrics.slowConsumers.increment()
        cutOffSlowConsumer()
    }

    public func connectionDidExceedInboundRate(_ connection: Connection) {
        server.metrics.inboundRateCloses.increment()
        closeForInboundRate()
    }

    public func connectionDidDrain(_ connection: Connection) {
        delegate?.webSocketSessionDidDrain(self)
    }

    public func connectionShouldShutDown(_ connection: Connection) {
        close(code: 1001, reason: "server shutting down")
    }

    public func connectionDidClose(_ connection: Connection, reason: CloseReason) {
        server.connectionClosed(reason: reason)
        transportClosed(reason: reason)
    }
}

extension WebSocketClosure {
    /// A short text for the close reason in logs.
    var logDescription: String {
        switch self {
        case .handshakeCompleted(let code, _, let initiatedLocally):
            "websocket closed (\(initiatedLocally ? "by us" : "by peer"), code \(code.map { "\($0.rawValue)" } ?? "none"))"
        case .failed(let error):
            "websocket protocol error: \(error)"
        }
    }
}
