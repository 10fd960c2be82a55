import CoreMetrics
import HTTP1
import HTTPServer
import Synchronization
import Transport
import Wire

/// The long-poll transport's requests (long-polling.md §1) and the WebSocket upgrade of its sessions (§7).
extension Gateway {
    func longPollRoute(_ request: HTTPRequest) -> Route {
        guard request.head.method == "GET" || request.head.method == "POST" else {
            return .respond(.error(.methodNotAllowed, message: "long polling uses GET (and POST for disconn)"))
        }
        metrics.longPollRequests.increment()
        let parsed: LongPollRequest
        do {
            parsed = try LongPollRequest.parse(query: request.head.query ?? "")
        } catch {
            return .respond(LongPollScript.refusal(.badRequest, error.description))
        }
        switch parsed.kind {
        case .start(let parameters, let callback):
            return startLongPoll(request.head, parameters: parameters, callback: callback)
        case .poll(let credentials, let segments):
            guard let channel = longPolls.channel(credentials) else { return .respond(LongPollDirectory.unknownSession) }
            return .deferred { pending in channel.loop.execute { channel.poll(segments, answer: pending) } }
        case .disconnectFrame(let credentials):
            guard longPolls.channel(credentials) != nil else { return .respond(LongPollDirectory.unknownSession) }
            return .respond(LongPollScript.disconnectFrame(id: credentials.id, password: credentials.password))
        case .disconnect(let credentials):
            guard let channel = longPolls.channel(credentials) else { return .respond(LongPollDirectory.unknownSession) }
            channel.loop.execute { channel.clientLeft() }
            return .respond(LongPollScript.response([]))
        }
    }

    /// A new session (§2): the namespace, admin and connection checks of a WebSocket upgrade, then a wire session
    /// on a long-poll channel, on the loop of the connection that asked.
    private func startLongPoll(_ head: HTTPRequestHead, parameters: ConnectionParameters, callback: String?) -> Route {
        let namespace: Namespace
        switch realtimeNamespace(head, parameters: parameters) {
        case .success(let opened): namespace = opened
        case .failure(.notCreated(let name)):
            // As a refused WebSocket: the shutdown message (the SDK stops reconnecting), then the end.
            var script = LongPollScript.startPreamble(callback: callback, id: SessionID.make(length: 16),
                                                      password: SessionID.make(length: SessionID.passwordLength))
            let shutdown = ServerMessage.shutdown(reason: NamespaceProblem.notCreated(name).description).encoded()
            LongPollScript.appendMessages([shutdown], number: 0, to: &script)
            script += LongPollScript.closeCommand(lastNumber: 0)
            return .respond(LongPollScript.response(script))
        case .failure(let problem):
            return .respond(LongPollScript.refusal(problem.response.status, problem.description))
        }
        let server = self.server.withLock { $0 }
        guard server?.admitSession() ?? true else {
            return .respond(LongPollScript.refusal(.serviceUnavailable, "too many connections"))
        }
        let host = head.headers["Host"] ?? "localhost"
        let crossSite = CrossSiteRequest.isCrossSite(head)
        // Called on the loop of the connection that asked, which the session then belongs to.
        return .deferred { [self] pending in
            let loop = pending.loop
            let sessionID = SessionID.make()
            let channel = LongPollChannel(
                id: SessionID.make(length: 16), password: SessionID.make(length: SessionID.passwordLength), sessionID: sessionID, loop: loop,
                settings: configuration.longPoll, directory: longPolls, metrics: metrics,
                maxMessageBytes: FrameAssembler.Limits.defaultMaxMessageBytes,
                releaseSlot: { server?.releaseSession() })
            let session = WireSession(
                channel: channel, loop: loop, namespace: namespace, services: sessionServices, host: host,
                lastSessionID: parameters.lastSessionID, openedByCrossSitePage: crossSite, sessionID: sessionID,
                appCheckToken: parameters.appCheckToken)
            channel.start(session, callback: callback, answering: pending)
        }
    }

    /// A WebSocket taking over the long-poll session whose hello said `transportSession` (§7); one naming no live
    /// long-poll session gets a reset and is closed.
    func upgradeRoute(transportSession: String, host: String) -> Route {
        guard let longPoll = longPolls.channel(sessionID: transportSession) else {
            return .webSocket { _ in
                RefusedSession(message: .reset(host: host), closeCode: 1000, closeReason: "no such long-poll session")
            }
        }
        return .webSocket { webSocket in UpgradedWebSocketChannel(webSocket: webSocket, longPoll: longPoll) }
    }
}
