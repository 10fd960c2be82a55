import HTTP1
import Logging
import Primitives
import TLS
import Transport
import WebSocket

/// The protocol state of one accepted connection: optional TLS, then HTTP/1.1 requests, then
/// possibly a WebSocket session or a streaming response. Owned by the connection's loop.
final class ServerConnection: ConnectionHandler, @unchecked Sendable {
    // Every property is owned by `connection.loop.queue`.

    private enum Mode {
        /// Speaking HTTP, with the parser; it is released when the connection becomes a WebSocket, so that an idle
        /// WebSocket keeps none of it (the parser is about 200 bytes even with its buffers released).
        case http(HTTPParserBox)
        /// A TLS connection's WebSocket: its events pass through here, to be decrypted.
        case webSocket(WebSocketSession)
        /// A plain connection handed to its WebSocket session, which is now the connection's handler.
        case upgraded
        case stream(ResponseStream)
    }

    // The stored properties are ordered by size, so that they pack without padding.
    let connection: Connection
    let server: HTTPServer
    private let tls: TLSSession?
    private var mode: Mode
    /// Whether plaintext held by ``tls`` already took the connection past its outbound hard limit (reported once).
    private var plaintextOverLimit = false
    /// Set while a deferred response is outstanding: later pipelined requests wait in the parser.
    private var awaitingResponse = false
    /// Whether the request being answered is a `HEAD` (its answer goes without the body).
    private var answeringHead = false
    /// How long a client may take to send a request's head (``ServerConfiguration/handshakeTimeoutSeconds``).
    private var handshakeTimeout: UInt64 { server.handshakeTimeoutNanoseconds }

    init(connection: Connection, server: HTTPServer, tls: TLSSession?) {
        self.connection = connection
        self.server = server
        self.tls = tls
        mode = .http(HTTPParserBox(HTTPRequestParser(limits: server.configuration.httpLimits)))
        connection.policy = server.connectionPolicy
        connection.handshakeDeadline = MonotonicClock.nowNanoseconds() &+ handshakeTimeout
    }

    // MARK: - Inbound

    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) {
        guard let tls else {
            plaintextReceived(bytes)
            return
        }
        do {
            let plaintext = try tls.receivedCiphertext(bytes)
            flushCiphertext()
            if !plaintext.isEmpty { plaintext.withUnsafeBytes { plaintextReceived($0) } }
            if tls.peerClosed { closeAfterFlush(reason: .peerClosed) }
        } catch TLSError.plaintextHTTPRequest {
            let response = HTTPResponse.error(.badRequest, message: "this port speaks TLS: use https:// or wss://")
            connection.write(response.encodedClosingConnection())  // unencrypted: the peer speaks plain HTTP
            connection.closeAfterFlush(reason: .local("plain HTTP on the TLS port"))
        } catch {
            flushCiphertext()
            server.logger.debug("tls.failed", metadata: ["connection.id": "\(connection.id)", "error": "\(error)"])
            connection.closeAfterFlush(reason: .local("TLS error"))
        }
    }

    private func plaintextReceived(_ bytes: UnsafeRawBufferPointer) {
        switch mode {
        case .http(let http):
            http.parser.feed(bytes)
            processRequests()
        case .webSocket(let session):
            session.bytesReceived(bytes)
        case .stream:
            break  // a streaming client has nothing more to say; ignore what it sends
        case .upgraded:
            break  // the session is the connection's handler: nothing comes here any more
        }
    }

    private func processRequests() {
        while case .http(let http) = mode, !awaitingResponse, !connection.isClosed, let event = http.parser.next() {
            switch event {
            case .expectContinue:
                sendPlaintext(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
            case .failure(let error):
                answeringHead = false
                respondAndClose(.error(error.status, message: error.message), reason: "bad request: \(error.status.code)")
                return
            case .request(let request):
                connection.handshakeDeadline = nil
                handle(request)
            }
        }
        // Bytes held back behind an answer still owed are not a slow client: the deadline waits for that answer.
        if case .http(let http) = mode, !awaitingResponse, !connection.isClosed, connection.handshakeDeadline == nil,
           http.parser.hasPartialRequest
        {
            connection.handshakeDeadline = MonotonicClock.nowNanoseconds() &+ handshakeTimeout
        }
    }

    private func handle(_ request: HTTPRequest) {
        let context = RequestContext(remoteAddress: connection.remoteAddress, isSecure: tls != nil)
        // HEAD is answered as GET would be, without the body (RFC 9110 §9.3.2).
        var routed = request
        answeringHead = request.head.method == "HEAD"
        if answeringHead { routed.head.method = "GET" }
        switch server.route(routed, context: context) {
        case .respond(let response):
            if request.head.keepAlive {
                sendPlaintext(response.encoded(includingBody: !answeringHead))
            } else {
                respondAndClose(response, reason: "request done")
            }
        case .deferred(let answer):
            awaitingResponse = true
            answer(PendingResponse(owner: self, keepAlive: request.head.keepAlive))
        case .webSocket where answeringHead:
            respondAndClose(.error(.badRequest, message: "a WebSocket upgrade must be a GET"), reason: "HEAD upgrade")
        case .webSocket(let makeDelegate):
            upgrade(request, makeDelegate: makeDelegate)
        case .stream(let head, _) where answeringHead:
            sendPlaintext(head.encoded())
            closeAfterFlush(reason: .local("HEAD of a stream"))
        case .stream(let head, let start):
            beginStream(head: head, start: start)
        }
    }

    /// Sends a streaming response's head and hands the stream to `start`; the connection serves nothing else.
    private func beginStream(head: HTTPResponseHead, start: @Sendable (ResponseStream) -> Void) {
        let stream = ResponseStream(owner: self)
        mode = .stream(stream)
        connection.idleTimeoutSuspended = true
        sendPlaintext(head.encoded())
        start(stream)
    }

    private func upgrade(
        _ request: HTTPRequest, makeDelegate: @Sendable (WebSocketSession) -> any WebSocketSessionDelegate
    ) {
        switch server.webSocketUpgrade.negotiate(request.head) {
        case .failure(let rejection):
            respondAndClose(rejection.response, reason: "websocket handshake rejected")
        case .success(let accepted):
            sendPlaintext(accepted.response.encoded())
            var leftover: [UInt8] = []
            if case .http(let http) = mode { leftover = http.parser.takeUnparsedBytes() }
            let session = WebSocketSession(
                connection: connection, server: server, tls: tls == nil ? nil : self, machine: accepted.machine)
            if tls == nil {
                // The session takes the plain connection over: this object and its parser are released.
                mode = .upgraded
                connection.handler = session
            } else {
                // The parser is done with this connection: the mode lets go of it.
                mode = .webSocket(session)
            }
            session.delegate = makeDelegate(session)
            session.delegate?.webSocketSessionDidOpen(session)
            if !leftover.isEmpty { leftover.withUnsafeBytes { session.bytesReceived($0) } }
        }
    }

    /// Sends the answer to a deferred request, then goes on with requests that arrived behind it.
    func completeDeferred(_ response: HTTPResponse, keepAlive: Bool) {
        guard awaitingResponse, !connection.isClosed else { return }
        awaitingResponse = false
        if keepAlive {
            sendPlaintext(response.encoded(includingBody: !answeringHead))
            processRequests()
        } else {
            respondAndClose(response, reason: "request done")
        }
    }

    /// Answers a deferred request with a streaming response.
    func completeDeferred(streaming head: HTTPResponseHead, start: @Sendable (ResponseStream) -> Void) {
        guard awaitingResponse, !connection.isClosed else { return }
        awaitingResponse = false
        guard !answeringHead else {
            sendPlaintext(head.encoded())
            return closeAfterFlush(reason: .local("HEAD of a stream"))
        }
        beginStream(head: head, start: start)
    }

    // MARK: - Outbound

    /// Sends `response` with `Connection: close`, then closes once it is out.
    private func respondAndClose(_ response: HTTPResponse, reason: String) {
        sendPlaintext(response.encodedClosingConnection(includingBody: !answeringHead))
        closeAfterFlush(reason: .local(reason))
    }

    /// Sends plaintext bytes (encrypting them first on a TLS connection).
    func sendPlaintext(_ bytes: [UInt8]) {
        guard let tls else {
            connection.write(bytes)
            return
        }
        bytes.withUnsafeBytes { sendEncrypted($0, tls: tls) }
    }

    /// Sends a shared chunk as is (plain connections) or encrypted (TLS).
    func sendPlaintext(_ chunk: ByteChunk) {
        guard let tls else {
            connection.write(chunk)
            return
        }
        sendEncrypted(chunk.bytes, tls: tls)
    }

    private func sendEncrypted(_ bytes: UnsafeRawBufferPointer, tls: TLSSession) {
        do {
            try tls.writePlaintext(bytes)
            flushCiphertext()
            if tls.bufferedPlaintextCount > 0 { checkOutboundLimit(bufferedPlaintext: tls.bufferedPlaintextCount) }
        } catch TLSError.sessionClosed {
            // Closing: the close_notify is on its way, and nothing may follow it.
        } catch {
            connection.close(reason: .local("TLS write failed"))
        }
    }

    /// Plaintext the TLS session holds back (until its handshake completes) counts towards the outbound hard limit
    /// like the queued ciphertext, so a peer that never finishes its handshake cannot make the server buffer more.
    private func checkOutboundLimit(bufferedPlaintext: Int) {
        guard !plaintextOverLimit, !connection.isClosed,
              bufferedPlaintext + connection.pendingOutboundBytes > connection.limits.hardLimit
        else { return }
        plaintextOverLimit = true
        connectionDidExceedOutboundLimit(connection)
    }

    private func flushCiphertext() {
        while let tls, let ciphertext = tls.takeCiphertext() {
            connection.write(ciphertext)
        }
    }

    /// Closes once the output is out; over TLS after a close_notify alert (RFC 8446 §6.1), so the peer can tell the
    /// end of the data from a truncation.
    func closeAfterFlush(reason: CloseReason, lingerNanoseconds: UInt64 = 2_000_000_000) {
        if let tls {
            tls.close()
            flushCiphertext()
        }
        connection.closeAfterFlush(reason: reason, lingerNanoseconds: lingerNanoseconds)
    }

    // MARK: - Transport events

    func connectionDidBecomeIdle(_ connection: Connection) {
        if case .webSocket(let session) = mode {
            session.idle()
        } else if !awaitingResponse {
            // A connection waiting for the server's own answer is not idle.
            connection.close(reason: .idleTimeout)
        }
    }

    func connectionDidExceedOutboundLimit(_ connection: Connection) {
        server.metrics.slowConsumers.increment()
        if case .webSocket(let session) = mode {
            session.cutOffSlowConsumer()
        } else {
            connection.close(reason: .slowConsumer)
        }
    }

    func connectionDidExceedInboundRate(_ connection: Connection) {
        server.metrics.inboundRateCloses.increment()
        if case .webSocket(let session) = mode {
            session.closeForInboundRate()
        } else {
            connection.close(reason: .inboundRateExceeded)
        }
    }

    func connectionDidDrain(_ connection: Connection) {
        if case .webSocket(let session) = mode { session.delegate?.webSocketSessionDidDrain(session) }
    }

    func connectionShouldShutDown(_ connection: Connection) {
        switch mode {
        case .webSocket(let session):
            session.close(code: 1001, reason: "server shutting down")
        case .stream(let stream):
            stream.finish()
        case .http:
            connection.close(reason: .shutdown)
        case .upgraded:
            break
        }
    }

    func connectionDidClose(_ connection: Connection, reason: CloseReason) {
        server.connectionClosed(reason: reason)
        switch mode {
        case .webSocket(let session):
            session.transportClosed(reason: reason)
        case .stream(let stream):
            let onClose = stream.onClose
            stream.onClose = nil
            onClose?()
        case .http, .upgraded:
            break
        }
    }
}

/// An HTTP parser behind a reference, so that a connection can let go of it when it stops speaking HTTP.
private final class HTTPParserBox {
    var parser: HTTPRequestParser

    init(_ parser: HTTPRequestParser) {
        self.parser = parser
    }
}
