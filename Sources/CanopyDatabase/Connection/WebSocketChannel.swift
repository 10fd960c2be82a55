import TLS
import WebSocket

/// Where a database's realtime channel is: `ws[s]://host:port/.ws?v=5&ns=namespace`.
struct ChannelEndpoint: Sendable, Equatable {
    var host: String
    var port: Int
    /// TLS (`wss`).
    var secure: Bool
    /// The request target, `/.ws?v=5&ns=…` (with `ls=` when resuming a session).
    var target: String

    /// The `Host` header: the port only when it is not the scheme's default.
    var hostHeader: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? bracketed : "\(bracketed):\(port)"
    }
}

/// A WebSocket connection to the server: TCP (``ClientSocket``), TLS when the endpoint is secure, the opening
/// handshake, then text messages both ways. Owned by a ``ConnectionLoop``; events arrive on its thread.
final class WebSocketChannel: @unchecked Sendable {
    // Every mutable property is owned by the loop's thread.

    /// What the channel reports.
    enum Event {
        /// The handshake completed: messages may be sent.
        case open
        /// A text message arrived.
        case text([UInt8])
        /// The channel ended, with the reason.
        case closed(String)
    }

    /// Largest handshake response accepted.
    private static let maxResponseHeadBytes = 16 * 1024

    private let loop: ConnectionLoop
    private let onEvent: (Event) -> Void
    private var socket: ClientSocket?
    private let tls: TLSSession?
    private let handshake = WebSocketClientHandshake()
    private let upgradeRequest: [UInt8]
    /// The response head while it arrives; `nil` once the handshake is done.
    private var responseHead: [UInt8]? = []
    private var machine = WebSocketConnectionStateMachine(role: .client)
    private var actions: [WebSocketConnectionStateMachine.Action] = []
    private var maskingKeys = MaskingKeys()
    /// A frame on its way into TLS (kept for its storage).
    private var frameScratch: [UInt8] = []
    private var ended = false

    /// Opens a channel to `endpoint`; `headers` go with the upgrade request (`Authorization`, `User-Agent`).
    ///
    /// - Throws: a ``TLSError`` when the TLS session cannot be made (a bad server name).
    init(endpoint: ChannelEndpoint, headers: [(name: String, value: String)], tlsContext: TLSContext?,
         loop: ConnectionLoop, onEvent: @escaping (Event) -> Void) throws
    {
        self.loop = loop
        self.onEvent = onEvent
        tls = try tlsContext.map { try TLSSession(context: $0, serverName: endpoint.host) }
        upgradeRequest = handshake.requestHead(
            host: endpoint.hostHeader, target: endpoint.target, additionalHeaders: headers)
        socket = ClientSocket(host: endpoint.host, port: endpoint.port, loop: loop) { [weak self] event in
            self?.socketEvent(event)
        }
    }

    /// Sends one text message (the caller splits long ones into protocol frames).
    func send(text: [UInt8]) {
        send(count: text.count) { payload in text.withUnsafeBytes { payload.copyMemory(from: $0) } }
    }

    /// Sends one text message of `count` bytes that `fill` writes in place.
    ///
    /// The frame is written here rather than by the state machine (which makes an array and draws a key from the
    /// system per frame): straight into the socket's output, or into a reused buffer for TLS, with a key from
    /// ``MaskingKeys``. The channel negotiates no extension, so a message is one uncompressed frame.
    func send(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) {
        loop.assertOnLoop()
        guard !ended, responseHead == nil, machine.state == .open else { return }
        let key = maskingKeys.take()
        let total = WebSocketFrameEncoder.headerSize(payloadCount: count, masked: true) + count
        guard tls != nil else {
            socket?.write(count: total) { Self.encodeFrame(count: count, fill, key: key, into: $0) }
            return
        }
        frameScratch.removeAll(keepingCapacity: true)
        frameScratch.append(contentsOf: repeatElement(0, count: total))
        frameScratch.withUnsafeMutableBytes { Self.encodeFrame(count: count, fill, key: key, into: $0) }
        sendPlaintext(frameScratch)
    }

    /// Writes a masked text frame of a `count`-byte payload that `fill` writes into `destination`, which holds
    /// exactly the frame.
    private static func encodeFrame(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void,
                                    key: WebSocketMaskingKey, into destination: UnsafeMutableRawBufferPointer)
    {
        // The encoder wants room for its largest header; a short frame has less.
        var header: (UInt64, UInt64) = (0, 0)
        let headerCount = withUnsafeMutableBytes(of: &header) {
            WebSocketFrameEncoder.writeHeader(into: $0, opcode: .text, payloadCount: count, maskingKey: key)
        }
        withUnsafeBytes(of: header) { destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<headerCount])) }
        let body = UnsafeMutableRawBufferPointer(rebasing: destination[headerCount...])
        fill(body)
        key.apply(to: body, payloadOffset: 0)
    }

    /// Closes the channel (a close frame when open, then the socket); no event follows.
    func close() {
        loop.assertOnLoop()
        guard !ended else { return }
        ended = true
        if responseHead == nil { sendPlaintext(machine.close(code: .normalClosure)) }
        tls?.close()
        flushCiphertext()
        socket?.close()
        socket = nil
    }

    // MARK: - Events

    private func socketEvent(_ event: ClientSocket.Event) {
        guard !ended else { return }
        switch event {
        case .connected:
            do {
                try tls?.startHandshake()
            } catch {
                return end("TLS: \(error)")
            }
            sendPlaintext(upgradeRequest)
        case .received(let bytes):
            received(bytes)
        case .closed(let error):
            end(error.map { "\($0)" } ?? "the server closed the connection")
        }
    }

    /// Bytes from the socket (valid only during the call).
    private func received(_ bytes: UnsafeRawBufferPointer) {
        guard let tls else { return receivedPlaintext(bytes) }
        let plaintext: [UInt8]
        do {
            plaintext = try tls.receivedCiphertext(bytes)
        } catch {
            return end("TLS: \(error)")
        }
        flushCiphertext()
        if tls.peerClosed, plaintext.isEmpty { return end("the server closed the connection") }
        plaintext.withUnsafeBytes { receivedPlaintext($0) }
    }

    private func receivedPlaintext(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        guard var head = responseHead else { return receivedFrames(bytes) }
        let searchFrom = head.count - 3
        head.append(contentsOf: bytes)
        guard let end = WebSocketClientHandshake.responseHeadEnd(in: head, searchingFrom: searchFrom) else {
            guard head.count <= Self.maxResponseHeadBytes else { return self.end("the upgrade response is too long") }
            responseHead = head
            return
        }
        do {
            let outcome = try handshake.validateResponseHead(head[..<end])
            guard outcome.extensions.isEmpty else { return self.end("the server chose an extension not offered") }
        } catch {
            return self.end("the server refused the WebSocket upgrade: \(error)")
        }
        responseHead = nil
        onEvent(.open)
        guard !ended, end < head.count else { return }
        head[end...].withUnsafeBytes { receivedFrames($0) }
    }

    /// Frames after the handshake, read straight from the socket's buffer.
    private func receivedFrames(_ bytes: UnsafeRawBufferPointer) {
        actions.removeAll(keepingCapacity: true)
        machine.bytesReceived(bytes, into: &actions)
        for action in actions where !ended {
            switch action {
            case .message(.text(let text)): onEvent(.text(text))
            case .message(.binary): end("the server sent a binary message")
            case .send(let frame): sendPlaintext(frame)
            case .closeConnection(let closure): end("closed: \(closure)")
            }
        }
    }

    private func end(_ reason: String) {
        guard !ended else { return }
        ended = true
        socket?.close()
        socket = nil
        onEvent(.closed(reason))
    }

    // MARK: - Output

    private func sendPlaintext(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        guard let tls else {
            socket?.write(bytes)
            return
        }
        do {
            try bytes.withUnsafeBytes { try tls.writePlaintext($0) }
        } catch {
            return end("TLS: \(error)")
        }
        flushCiphertext()
    }

    private func flushCiphertext() {
        while let tls, let ciphertext = tls.takeCiphertext() { socket?.write(ciphertext) }
    }
}
