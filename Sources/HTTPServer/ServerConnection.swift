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
        /// Speaking HTTP, with the parser and the answers owed; released when the connection becomes a WebSocket,
        /// so that an idle WebSocket keeps none of it (the parser is about 200 bytes even with its buffers released).
        case http(HTTPExchange)
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
    /// How long a client may take to send a request's head (``ServerConfiguration/handshakeTimeoutSeconds``).
    private var handshakeTimeout: UInt64 { server.handshakeTimeoutNanoseconds }

    init(connection: Connection, server: HTTPServer, tls: TLSSession?) {
        self.connection = connection
        self.server = server
        self.tls = tls
        mode = .http(HTTPExchange(HTTPRequestParser(limits: server.configuration.httpLimits)))
        connection.policy = server.connectionPolicy
        connection.handshakeDeadline = MonotonicClock.nowNanoseconds() &+ handshakeTimeout
    }

    /// The HTTP state, while the connection speaks HTTP.
    private var exchange: HTTPExchange? {
        if case .http(let exchange) = mode { return exchange }
        return nil
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
        while let exchange, exchange.owed.held == nil, !exchange.lastRequestRouted,
              exchange.owed.mayRouteBehind(heldLimit: heldAnswersLimit), !connection.isClosed,
              let event = exchange.parser.next()
        {
            switch event {
            case .expectContinue:
                // A 100 goes out in order too: the client sends the body only once it has it.
                if exchange.owed.isEmpty {
                    sendPlaintext(Self.continueResponse)
                } else {
                    exchange.owed.continueOwed = true
                }
            case .failure(let error):
                exchange.lastRequestRouted = true
                let number = exchange.owed.owe(OwedAnswers.Manner(keepAlive: false, isHead: false), placement: .none)
                record(number, .response(.error(error.status, message: error.message)), in: exchange)
                return
            case .request(let request):
                exchange.owed.continueOwed = false  // a client that sent its body anyway needs no 100 any more
                connection.handshakeDeadline = nil
                handle(request, in: exchange)
            }
        }
        // Bytes held back behind an answer still owed are not a slow client: the deadline waits for that answer.
        if let exchange, exchange.owed.isEmpty, !connection.isClosed, connection.handshakeDeadline == nil,
           exchange.parser.hasPartialRequest
        {
            connection.handshakeDeadline = MonotonicClock.nowNanoseconds() &+ handshakeTimeout
        }
    }

    /// How many bytes of answers may wait behind an unanswered request, with what waits to be written, before no
    /// more requests are routed: the outbound high-water mark, so that sending them all stays far below the hard
    /// limit.
    private var heldAnswersLimit: Int { connection.limits.highWaterMark - connection.pendingOutboundBytes }

    private static let continueResponse = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    private func handle(_ request: HTTPRequest, in exchange: HTTPExchange) {
        let manner = OwedAnswers.Manner(keepAlive: request.head.keepAlive, isHead: request.head.method == "HEAD")
        if !manner.keepAlive { exchange.lastRequestRouted = true }
        let context = context(ahead: exchange.owed.orderAhead)
        let route = server.route(request.routedAsGET(manner.isHead), context: context)
        start(route, for: request, manner: manner, in: exchange)
    }

    private func context(ahead: PipelineOrder?) -> RequestContext {
        RequestContext(remoteAddress: connection.remoteAddress, isSecure: tls != nil, unansweredAhead: ahead)
    }

    /// Starts what `route` says for `request`: at once, or, when it cannot be ordered behind the answers owed,
    /// once they are sent.
    private func start(_ route: Route, for request: HTTPRequest, manner: OwedAnswers.Manner, in exchange: HTTPExchange) {
        switch route {
        case .respond(let response):
            record(exchange.owed.owe(manner, placement: .none), .response(response), in: exchange)
        case .ordered(let order, let answer) where exchange.owed.isEmpty || exchange.owed.orderAhead == order:
            answer(PendingResponse(owner: self, number: exchange.owed.owe(manner, placement: .order(order))))
        case .deferred, .ordered, .webSocket, .stream, .routeWhenAnswered:
            guard exchange.owed.isEmpty else {
                exchange.owed.held = HeldRoute(route: route, request: request, manner: manner)
                return
            }
            startAlone(route, for: request, manner: manner, in: exchange)
        }
    }

    /// Starts a route that nothing owed is ahead of.
    private func startAlone(_ route: Route, for request: HTTPRequest, manner: OwedAnswers.Manner,
                            in exchange: HTTPExchange)
    {
        switch route {
        case .respond, .ordered:
            start(route, for: request, manner: manner, in: exchange)
        case .routeWhenAnswered:
            // Nothing is owed now, so the router answers it this time; should it not, the request is refused.
            let rerouted = server.route(request.routedAsGET(manner.isHead), context: context(ahead: nil))
            if case .routeWhenAnswered = rerouted {
                let refusal = HTTPResponse.error(.internalServerError, message: "unroutable")
                record(exchange.owed.owe(manner, placement: .none), .response(refusal), in: exchange)
            } else {
                start(rerouted, for: request, manner: manner, in: exchange)
            }
        case .deferred(let answer):
            answer(PendingResponse(owner: self, number: exchange.owed.owe(manner, placement: .unordered)))
        case .webSocket where manner.isHead:
            respondAndClose(.error(.badRequest, message: "a WebSocket upgrade must be a GET"), isHead: true,
                            reason: "HEAD upgrade")
        case .webSocket(let makeDelegate):
            upgrade(request, makeDelegate: makeDelegate)
        case .stream(let head, _) where manner.isHead:
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
            respondAndClose(rejection.response, isHead: false, reason: "websocket handshake rejected")
        case .success(let accepted):
            sendPlaintext(accepted.response.encoded())
            var leftover: [UInt8] = []
            if let exchange { leftover = exchange.parser.takeUnparsedBytes() }
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

    /// Records the answer to request `number` (from the loop, handed over by ``PendingResponse``), then goes on
    /// with the requests that wait behind it.
    func complete(_ number: UInt64, with answer: OwedAnswers.Answer) {
        guard !connection.isClosed, let exchange else { return }
        record(number, answer, in: exchange)
        processRequests()
    }

    /// Records the answer to request `number`, and sends every answer now next in request order. Once nothing is
    /// owed, a held request starts.
    private func record(_ number: UInt64, _ answer: OwedAnswers.Answer, in exchange: HTTPExchange) {
        exchange.owed.answer(number, with: answer)
        while let (answer, manner) = exchange.owed.takeReady() {
            switch answer {
            case .response(let response) where manner.keepAlive:
                sendPlaintext(response.encoded(includingBody: !manner.isHead))
            case .response(let response):
                return respondAndClose(response, isHead: manner.isHead, reason: "request done")
            case .stream(let head, _) where manner.isHead:
                sendPlaintext(head.encoded())
                return closeAfterFlush(reason: .local("HEAD of a stream"))
            case .stream(let head, let start):
                // Nothing is pipelined behind a stream: its request waited for every answer ahead of it.
                return beginStream(head: head, start: start)
            }
        }
        guard exchange.owed.isEmpty else { return }
        if exchange.owed.continueOwed {
            exchange.owed.continueOwed = false
            sendPlaintext(Self.continueResponse)
        }
        if let held = exchange.owed.held {
            exchange.owed.held = nil
            startAlone(held.route, for: held.request, manner: held.manner, in: exchange)
        }
    }

    // MARK: - Outbound

    /// Sends `response` with `Connection: close`, then closes once it is out.
    private func respondAndClose(_ response: HTTPResponse, isHead: Bool, reason: String) {
        sendPlaintext(response.encodedClosingConnection(includingBody: !isHead))
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
        } else if exchange?.owed.isEmpty ?? true {
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
        switch mode {
        case .webSocket(let session): session.delegate?.webSocketSessionDidDrain(session)
        case .http: processRequests()  // requests that waited for the answers ahead of them to go out
        case .upgraded, .stream: break
        }
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

extension HTTPRequest {
    /// The request as routed: a `HEAD` is answered as a `GET` would be, without the body (RFC 9110 §9.3.2).
    fileprivate func routedAsGET(_ isHead: Bool) -> HTTPRequest {
        guard isHead else { return self }
        var routed = self
        routed.head.method = "GET"
        return routed
    }
}

/// A connection's HTTP state behind a reference, so that the connection lets go of it when it stops speaking HTTP:
/// the parser, and the answers owed.
private final class HTTPExchange {
    var parser: HTTPRequestParser
    var owed = OwedAnswers()
    /// Set once a request that ends the connection was routed: nothing after it is read.
    var lastRequestRouted = false

    init(_ parser: HTTPRequestParser) {
        self.parser = parser
    }
}
