import DataModel
import Dispatch
import TLS
import Wire

/// What a ``PersistentConnection`` tells the layer above it, on the connection's loop.
protocol PersistentConnectionDelegate: AnyObject {
    /// Connected (the hello arrived); `serverTimeOffset` is the server's clock minus this machine's, in ms.
    func connectionDidConnect(serverTimeOffset: Double)
    /// The connection dropped; it reconnects by itself unless offline was asked for.
    func connectionDidDisconnect()
    /// The server replaced the data at `path` (`merge`: only the listed children) for the listen with `tag`.
    func connectionDidReceive(_ update: ServerUpdate, tag: Int?)
    /// The server revoked a listen (the rules no longer allow it).
    func connectionDidRevokeListen(path: Path, tag: Int?)
}

/// Data the server pushed.
enum ServerUpdate: Sendable {
    /// The whole node at `path`.
    case overwrite(path: Path, data: Node)
    /// Each change below `path`.
    case merge(path: Path, changes: [MergeChange])
}

/// The answer to a request: `ok` and its payload, or a failure status and message.
struct RequestOutcome: Sendable {
    var status: String
    var payload: ResponsePayload

    var isOK: Bool { status == "ok" }
    /// Whether the request was cut off by a lost connection (no answer came).
    var isDisconnected: Bool { status == Self.disconnected.status }

    /// The outcome of a request the connection could not carry: no answer came, or the client is offline.
    static let disconnected = RequestOutcome(status: "disconnected", payload: .text("the client is not connected"))
    /// The failure's message (`""` for `ok`).
    var message: String {
        if case .text(let text) = payload { return text }
        return ""
    }
}

/// The Firebase wire protocol over one channel at a time: requests numbered and answered through callbacks, a
/// hello per connection, reconnection with backoff, and the client's state restored on each new connection in the
/// SDKs' order (credential, listens, unacknowledged writes, onDisconnect operations queued while offline).
///
/// Owned by a ``ConnectionLoop``: every method is called on its thread and every callback runs there.
final class PersistentConnection: @unchecked Sendable {
    // Every mutable property is owned by the loop's thread.

    /// Where and how to connect.
    struct Settings {
        var host: String
        var port: Int
        var secure: Bool
        var namespace: String
        var tlsContext: TLSContext?
        /// Sent in the upgrade request as `Authorization: Bearer` (what the Node SDKs send), when set.
        var credential: String?
        /// Reconnection delays: the first, the largest, and the growth between attempts.
        var minimumBackoff: Double = 1
        var maximumBackoff: Double = 30
        var backoffGrowth: Double = 1.3
        /// A text `"0"` frame after this long without sending (the SDKs' keepalive).
        var keepaliveSeconds: Double = 45
        /// How long a `get` waits for a connection.
        var getTimeout: Double = 3
    }

    /// A listen the server should hold.
    private struct Listen {
        var request: ListenRequest
        /// The hash of the data held for it (sent when re-listening, so unchanged data is not resent).
        var currentHash: () -> String
        var onComplete: (RequestOutcome) -> Void
    }

    /// Who hears the answer to a request.
    private enum Answer {
        /// The write under this id in ``writes`` (a write's answer needs no closure of its own).
        case write(id: Int)
        case callback((RequestOutcome) -> Void)
    }

    /// A write waiting for its acknowledgement; re-sent on a new connection.
    private struct PendingWrite {
        var request: PreparedRequest
        var onComplete: (RequestOutcome) -> Void
        var sent = false
    }

    weak var delegate: (any PersistentConnectionDelegate)?
    private let settings: Settings
    private let loop: ConnectionLoop
    private var channel: WebSocketChannel?
    private var connected = false
    private var wantsOnline = true
    private var assembler = FrameAssembler()
    private var frequentMessages = FrequentMessages()
    private var nextRequestNumber = 1
    private var answers: [Int: Answer] = [:]
    private var listens: [ListenKey: Listen] = [:]
    /// Writes in the order made; acknowledged ones leave.
    private var writes = IDOrderedQueue<PendingWrite>()
    private var nextWriteID = 0
    /// Requests that only make sense on a live connection, made while offline (onDisconnect operations).
    private var queuedWhileOffline: [(action: ClientAction, onComplete: (RequestOutcome) -> Void)] = []
    private var credential: String?
    /// Gets waiting for a connection, with their timeouts' ids.
    private var waitingGets: [(id: Int, request: GetRequest, onComplete: (RequestOutcome) -> Void)] = []
    private var nextGetID = 0
    private var lastSessionID: String?
    private var backoff: Double
    /// The reconnection timer's id, while one is set.
    private var reconnect: Int?
    /// The keepalive timer: armed once per connection, it measures the silence since ``lastOutput`` when it fires
    /// (re-arming a timer on every request cost more than the request).
    private var keepalive: Int?
    /// When the last frame went out, in uptime nanoseconds.
    private var lastOutput: UInt64 = 0

    init(settings: Settings, loop: ConnectionLoop) {
        self.settings = settings
        self.loop = loop
        credential = settings.credential
        backoff = settings.minimumBackoff
    }

    /// Connects (and keeps reconnecting) until ``goOffline()``.
    func goOnline() {
        loop.assertOnLoop()
        wantsOnline = true
        if channel == nil, reconnect == nil { open() }
    }

    /// Disconnects and stays disconnected; requests wait for ``goOnline()``.
    func goOffline() {
        loop.assertOnLoop()
        wantsOnline = false
        if let reconnect { loop.cancelTimer(reconnect) }
        reconnect = nil
        if channel != nil { channelEnded() }
    }

    /// Whether a connection is up (the hello arrived).
    var isConnected: Bool { connected }

    // MARK: - Requests

    /// Asks the server to hold `request`'s listen; `currentHash` names the data already held (re-listening).
    func listen(_ request: ListenRequest, currentHash: @escaping () -> String,
                onComplete: @escaping (RequestOutcome) -> Void)
    {
        let listen = Listen(request: request, currentHash: currentHash, onComplete: onComplete)
        listens[request.key] = listen
        if connected { sendListen(listen) }
    }

    /// Drops the listen with `key`.
    func unlisten(_ key: ListenKey, query: QueryParams, queryObject: JSONValue?) {
        guard listens.removeValue(forKey: key) != nil, connected else { return }
        send(.unlisten(UnlistenRequest(path: key.path, query: query, queryObject: queryObject, tag: key.tag)),
             onComplete: { _ in })
    }

    /// Sends a write (`p` or `m`, encoded by the caller) now, or when connected; it is re-sent on every new
    /// connection until answered.
    func write(_ request: PreparedRequest, onComplete: @escaping (RequestOutcome) -> Void) {
        let id = nextWriteID
        nextWriteID += 1
        writes.append(PendingWrite(request: request, onComplete: onComplete), id: id)
        if connected { sendWrite(id) }
    }

    /// Sends an onDisconnect operation, or queues it until connected.
    func onDisconnect(_ action: ClientAction, onComplete: @escaping (RequestOutcome) -> Void) {
        if connected {
            send(action, onComplete: onComplete)
        } else {
            queuedWhileOffline.append((action, onComplete))
        }
    }

    /// A one-shot read; while not connected it waits up to ``Settings/getTimeout`` for a connection, then fails
    /// with ``RequestOutcome/disconnected`` (the caller falls back on data it holds), as the SDKs' `get` does.
    func get(_ request: GetRequest, onComplete: @escaping (RequestOutcome) -> Void) {
        guard !connected else { return send(.get(request), onComplete: onComplete) }
        let id = nextGetID
        nextGetID += 1
        waitingGets.append((id, request, onComplete))
        loop.after(settings.getTimeout) { [weak self] in
            guard let self, let index = waitingGets.firstIndex(where: { $0.id == id }) else { return }
            waitingGets.remove(at: index).onComplete(.disconnected)
        }
    }

    // MARK: - Connecting

    private func open() {
        reconnect = nil
        guard wantsOnline, channel == nil else { return }
        var target = "/.ws?v=5&ns=\(settings.namespace)"
        if let lastSessionID { target += "&ls=\(lastSessionID)" }
        let endpoint = ChannelEndpoint(host: settings.host, port: settings.port, secure: settings.secure, target: target)
        var headers: [(name: String, value: String)] = [("User-Agent", "CanopyDatabase/1 Swift")]
        if let credential = settings.credential { headers.append(("Authorization", "Bearer \(credential)")) }
        do {
            channel = try WebSocketChannel(
                endpoint: endpoint, headers: headers, tlsContext: settings.secure ? settings.tlsContext : nil,
                loop: loop
            ) { [weak self] event in self?.channelEvent(event) }
        } catch {
            scheduleReconnect()
        }
    }

    private func channelEvent(_ event: WebSocketChannel.Event) {
        switch event {
        case .open:
            assembler.reset()
        case .text(let frame):
            received(frame)
        case .closed:
            channel = nil
            channelEnded()
        }
    }

    /// The channel is gone (or is being closed): callbacks of requests in flight wait for the next connection
    /// (writes and listens are re-sent) or fail (other requests).
    private func channelEnded() {
        channel?.close()
        channel = nil
        if let keepalive { loop.cancelTimer(keepalive) }
        keepalive = nil
        let wasConnected = connected
        connected = false
        let orphaned = answers
        answers = [:]
        for id in writes.heldIDs { writes.modify(id: id) { $0.sent = false } }
        for (_, answer) in orphaned { deliver(.disconnected, to: answer) }
        if wasConnected { delegate?.connectionDidDisconnect() }
        scheduleReconnect()
    }

    private func scheduleReconnect() {
        guard wantsOnline, reconnect == nil else { return }
        let delay = backoff * Double.random(in: 0.5...1)
        backoff = min(settings.maximumBackoff, backoff * settings.backoffGrowth)
        reconnect = loop.after(delay) { [weak self] in self?.open() }
    }

    // MARK: - Receiving

    private func received(_ frame: [UInt8]) {
        let output: FrameAssembler.Output
        do {
            output = try assembler.receive(frame)
        } catch {
            return channelEnded()
        }
        guard case .message(let bytes) = output else { return }
        guard let message = frequentMessages.parse(bytes) ?? (try? ServerMessage.parse(bytes)) else {
            return channelEnded()
        }
        switch message {
        case .handshake(let hello):
            helloArrived(hello)
        case .response(let number, let status, let payload):
            if let answer = answers.removeValue(forKey: number) {
                deliver(RequestOutcome(status: status.rawValue, payload: payload), to: answer)
            }
        case .dataPush(let path, let data, let tag):
            delegate?.connectionDidReceive(.overwrite(path: path, data: data), tag: tag)
        case .mergePush(let path, let changes, let tag):
            delegate?.connectionDidReceive(.merge(path: path, changes: changes), tag: tag)
        case .listenRevoked(let path, let query):
            // A default listen is revoked without a query; a tagged one by the query object it was sent with.
            let tag = query == nil ? nil : listens.first { $0.key.path == path && $0.value.request.queryObject == query }?.key.tag
            listens.removeValue(forKey: ListenKey(path: path, tag: tag))
            delegate?.connectionDidRevokeListen(path: path, tag: tag)
        case .authRevoked:
            credential = nil
            channelEnded()
        case .shutdown:
            wantsOnline = false
            channelEnded()
        case .reset, .pong, .error, .appCheckRevoked, .securityDebug:
            break
        }
    }

    private func helloArrived(_ hello: Handshake) {
        connected = true
        backoff = settings.minimumBackoff
        lastSessionID = hello.sessionID
        let offset = Double(hello.timestamp) - WallClock.milliseconds()
        if let credential { send(.auth(AuthRequest(method: .auth, credential: credential)), onComplete: { _ in }) }
        for listen in listens.values.sorted(by: { $0.request.path.description < $1.request.path.description }) {
            sendListen(listen)
        }
        for id in writes.heldIDs where writes.modify(id: id, { $0.sent }) == false { sendWrite(id) }
        let queued = queuedWhileOffline
        queuedWhileOffline = []
        for (action, onComplete) in queued { send(action, onComplete: onComplete) }
        let gets = waitingGets
        waitingGets = []
        for get in gets { send(.get(get.request), onComplete: get.onComplete) }
        lastOutput = DispatchTime.now().uptimeNanoseconds
        scheduleKeepalive(in: settings.keepaliveSeconds)
        delegate?.connectionDidConnect(serverTimeOffset: offset)
    }

    // MARK: - Sending

    private func sendListen(_ listen: Listen) {
        var request = listen.request
        request.hash = listen.currentHash()
        let key = request.key
        send(.listen(request)) { [weak self] outcome in
            // A listen cut off by a lost connection is sent again on the next one.
            guard let self, !outcome.isDisconnected, self.listens[key] != nil else { return }
            if !outcome.isOK { self.listens.removeValue(forKey: key) }
            listen.onComplete(outcome)
        }
    }

    private func sendWrite(_ id: Int) {
        guard let request = writes.modify(id: id, { write in
            write.sent = true
            return write.request
        }) else { return }
        send(request, answer: .write(id: id))
    }

    private func deliver(_ outcome: RequestOutcome, to answer: Answer) {
        switch answer {
        case .write(let id):
            // A write cut off by a lost connection stays, to be sent again on the next one.
            guard !outcome.isDisconnected, let write = writes.remove(id: id) else { return }
            write.onComplete(outcome)
        case .callback(let onComplete):
            onComplete(outcome)
        }
    }

    private func send(_ action: ClientAction, onComplete: @escaping (RequestOutcome) -> Void) {
        send(action, answer: .callback(onComplete))
    }

    private func send(_ action: ClientAction, answer: Answer) {
        send(PreparedRequest(action), answer: answer)
    }

    private func send(_ request: PreparedRequest, answer: Answer) {
        guard let channel, connected else { return }
        let number = nextRequestNumber
        nextRequestNumber += 1
        answers[number] = answer
        let count = request.count(number: number)
        if count <= FrameSplitter.maxFrameUnits {
            // One frame, as the splitter would say, written straight into the output.
            channel.send(count: count) { request.write(number: number, into: $0) }
        } else if let frames = try? FrameSplitter.frames(for: request.message(number: number)) {
            for frame in frames { channel.send(text: frame) }
        } else {
            answers.removeValue(forKey: number)
            return deliver(RequestOutcome(status: "too_big", payload: .text("the request is too large to send")), to: answer)
        }
        lastOutput = DispatchTime.now().uptimeNanoseconds
    }

    /// Sends `"0"` after ``Settings/keepaliveSeconds`` without output, as the SDKs do: the timer fires
    /// `seconds` from now, and sends only if nothing went out since (else it waits out the rest of the interval).
    private func scheduleKeepalive(in seconds: Double) {
        if let keepalive { loop.cancelTimer(keepalive) }
        keepalive = loop.after(seconds) { [weak self] in
            guard let self else { return }
            keepalive = nil
            guard connected, let channel else { return }
            let interval = settings.keepaliveSeconds
            let silence = Double(DispatchTime.now().uptimeNanoseconds &- lastOutput) / 1e9
            guard silence >= interval else { return scheduleKeepalive(in: interval - silence) }
            channel.send(text: Array("0".utf8))
            lastOutput = DispatchTime.now().uptimeNanoseconds
            scheduleKeepalive(in: interval)
        }
    }
}
