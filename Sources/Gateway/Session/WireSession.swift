import CoreMetrics
import DataModel
import HTTPServer
import Logging
import Primitives
import Synchronization
import Dispatch
import Store
import Transport
import WebSocket
import Wire

/// One client connection speaking the Firebase wire protocol (wire-protocol.md), owned by its event loop.
///
/// It reassembles frames, parses messages and hands every request to the namespace's store in arrival order
/// (§4.1), where each takes effect at its place in the namespace's one order: writes are sequenced there, and
/// listens, gets and onDisconnect registrations run there as ``Store/inOrder(publishing:_:)`` tasks, so each is checked and
/// answered against a tree that holds every earlier write of the connection. Listens become ``Subscription``s on
/// shared ``View``s; writes are acknowledged from the store's completion, which runs after the change was
/// published, so a writer's own listens see its write before its `ok` (§6.8). Everything mutable here belongs to
/// ``loop``, except ``onDisconnect``, which only the namespace's sequencer touches (behind a mutex).
final class WireSession: ViewSubscriber, @unchecked Sendable {
    // The stored properties are ordered by size, so that they pack without padding: every idle connection holds a
    // session.

    /// The session id sent in the hello; clients send it back as `ls` when they reconnect.
    let sessionID: String
    /// What carries the session now: its own WebSocket or a long-poll channel (replaced once when a long-poll
    /// session moves to a WebSocket, long-polling.md §7).
    var channel: any WireChannel {
        didSet { directWebSocket = channel.webSocketForFanOut.map(Unmanaged.passUnretained) }
    }
    /// The fan-out path's way to the channel's WebSocket when the channel writes to one on this loop: a reference
    /// that costs no reference count per delivery (the channel keeps the socket for as long as it is the channel).
    private var directWebSocket: Unmanaged<WebSocketSession>?
    let namespace: Namespace
    /// What the session needs from the server.
    let services: SessionServices
    let loop: EventLoop
    /// What ``open()`` needs and nothing after it: released once the session opened.
    private var opening: SessionOpening?
    /// Writes of the current read pass not yet submitted, and their request numbers.
    private var pendingWrites: [StoreWrite] = []
    private var pendingWriteRequests: [Int] = []
    /// Listens whose pushes are being skipped until the connection drains.
    private var conflated: [Subscription] = []
    /// The credentials' state, once the client used any (``credentials``).
    var credentialsIfMade: SessionCredentials?
    /// Reassembles the client's split messages when the channel is the session's own WebSocket
    /// (``WebSocketSession+WireChannel``).
    var assembler = FrameAssembler()
    /// The onDisconnect operations, changed only in sequencer tasks, so registrations take effect in order.
    private let onDisconnect = Mutex(OnDisconnectQueue())
    /// `coalesce=MS`: each listen gets at most one push per this many milliseconds, its view's latest data; 0
    /// when each push goes out as it comes.
    private let coalesceMilliseconds: UInt16
    /// Requests received and not answered yet (``SessionLimits/maxOutstandingRequests``), in 32 bits beside the
    /// other small fields. From half the limit on, the socket is not read until answers bring them down to a
    /// quarter, so a pipelining client is slowed; only requests that arrived in what was already read can pass the
    /// limit and be refused.
    private var outstandingRequests: Int32 = 0
    var listens = ListenTable()
    /// Whether the next poll of the listens is scheduled.
    private var pollScheduled = false
    private var readingPausedForAnswers = false
    /// Whether another site's web page opened the connection (``CrossSiteRequest``): it may not use the admin
    /// credential.
    let openedByCrossSitePage: Bool
    /// Writes (puts and merges) received and not answered yet; last, where it fills the small fields' padding
    /// (`IdleConnectionFootprintTests` holds the session to its malloc chunk).
    private var writesAwaitingAnswers: Int32 = 0

    /// The gateway's metrics.
    var metrics: GatewayMetrics { services.metrics }
    /// `coalesce=MS` in seconds, `nil` when each push goes out as it comes.
    private var coalesceSeconds: Double? { coalesceMilliseconds == 0 ? nil : Double(coalesceMilliseconds) / 1000 }

    init(channel: any WireChannel, loop: EventLoop, namespace: Namespace, services: SessionServices, host: String,
         lastSessionID: String?, openedByCrossSitePage: Bool, coalesceSeconds: Double? = nil,
         sessionID: String = SessionID.make(), appCheckToken: String? = nil)
    {
        opening = SessionOpening(host: host, lastSessionID: lastSessionID,
                                 appCheckToken: appCheckToken.flatMap { $0.isEmpty ? nil : $0 })
        self.channel = channel
        directWebSocket = channel.webSocketForFanOut.map(Unmanaged.passUnretained)
        self.openedByCrossSitePage = openedByCrossSitePage
        coalesceMilliseconds = coalesceSeconds.map { UInt16(min(max($0 * 1000, 1), Double(UInt16.max))) } ?? 0
        self.namespace = namespace
        self.services = services
        self.loop = loop
        self.sessionID = sessionID
    }

    // MARK: - Input from the channel

    /// The channel is ready: the session starts with the hello.
    func open() {
        guard let opening else { return }
        self.opening = nil
        services.directory.add(self)
        metrics.sessions.increment()
        if let lastSessionID = opening.lastSessionID, let previous = services.directory.session(withID: lastSessionID), previous !== self {
            // The client reconnected while its old socket still looks open (half-open TCP): end the old session
            // so its onDisconnect writes run now rather than at its idle timeout (§4.2).
            previous.loop.execute { previous.channel.close(code: 1000, reason: "replaced by a new session") }
        }
        if let appCheckToken = opening.appCheckToken { presentAppCheck(appCheckToken, request: nil) }
        // Clients send nothing before the hello; it waits until this node holds everything the cluster acknowledged
        // (at once on a single node), so a client that moved here from another node never goes back in time.
        // A node cut off from the cluster sends a new client elsewhere at once rather than keep it waiting.
        if namespace.store.isCutOff { closeUnlessAwaitingTheLog() }
        let loop = self.loop
        let host = opening.host
        namespace.store.awaitLogHead(resumingOn: { loop.execute($0) }) { [self] in sendHandshake(host: host) }
        // A namespace that failed to load before this session was listed: the gateway's sweep missed it.
        if namespace.store.hasFailed { closeForUnavailableNamespace() }
    }

    private func sendHandshake(host: String) {
        send(.handshake(Handshake(timestamp: Int(services.clock()), host: host, sessionID: sessionID)))
    }

    /// Ends the session because its namespace could not be loaded: an error message, then close code 1011.
    func closeForUnavailableNamespace() {
        guard !channel.isClosed else { return }
        send(.error("namespace \(namespace.name) is unavailable: it could not be loaded"))
        failConnection(code: 1011, reason: "namespace unavailable")
    }

    /// Cluster mode: the cluster took this node for dead and ran its onDisconnect writes. The client reconnects
    /// (here or elsewhere), sends its unacknowledged writes again and registers its onDisconnect writes again.
    func closeToRegisterAgain() {
        guard !channel.isClosed else { return }
        failConnection(code: 1001, reason: "node rejoining the cluster")
    }

    /// Cluster mode: the node has been cut off from the log for a while. A connection with nothing that awaits the
    /// log closes (code 1001): its client reconnects, through the balancer, to a node that serves, and listens there
    /// again. One whose writes or onDisconnect writes await the log stays: they may already be in the log, so its
    /// client sending them again through another node could apply them twice or out of order, and an onDisconnect
    /// write would run when this node reaches the log again. Its writes are acknowledged after the cut heals.
    func closeUnlessAwaitingTheLog() {
        guard !channel.isClosed, writesAwaitingAnswers == 0, pendingWrites.isEmpty,
              onDisconnect.withLock({ $0.isEmpty })
        else { return }
        failConnection(code: 1001, reason: "node cut off from the cluster")
    }

    /// One complete message from the client.
    func receive(_ bytes: [UInt8]) {
        metrics.messagesReceived.increment()
        do {
            handle(try ClientMessage.parse(bytes))
        } catch {
            reject(error)
        }
    }

    /// The channel could not make a message of what the client sent (wire-protocol.md §2).
    func receiveFailed(_ error: WireError) {
        reject(error)
    }

    /// The channel's output drained below its low-water mark.
    func drained() {
        catchUp()
    }

    /// `coalesce=MS`: sends each listen whose view moved on since its last push the view's latest data; runs every
    /// interval while the connection has listens, and before any answer.
    private func pollLatest() {
        for subscription in listens.subscriptions where subscription.isActive {
            guard let latest = subscription.view.latest(), latest.sequence > subscription.deliveredThrough else {
                continue
            }
            if sendPush(EncodedPush(path: subscription.path, data: latest.data), tag: subscription.tag) {
                metrics.countDeliveries(1)
            }
            subscription.deliveredThrough = latest.sequence
        }
    }

    /// Polls the listens every interval for as long as the connection is open (once started).
    private func schedulePolling() {
        guard let coalesceSeconds, !pollScheduled else { return }
        pollScheduled = true
        loop.execute(after: coalesceSeconds) { [self] in
            pollScheduled = false
            guard !channel.isClosed, !listens.isEmpty else { return }
            // Views only polled hold no data between polls: load them at this place in the namespace's order.
            let views = listens.subscriptions.map(\.view)
            namespace.store.inOrder { snapshot in
                for view in views { view.loadIfNeeded(from: snapshot) }
                self.loop.execute { [self] in
                    pollLatest()
                    loop.flushPending()
                    schedulePolling()
                }
            }
        }
    }

    /// Sends each conflated listen its view's latest data. Runs when the connection drained, and before any
    /// answer to the client, so no answer overtakes data it depends on (a write's echo before its `ok`, the newer
    /// value before a `datastale`).
    private func catchUp() {
        if coalesceSeconds != nil { pollLatest() }
        guard !conflated.isEmpty else { return }
        let behind = conflated
        conflated.removeAll()
        for subscription in behind where subscription.isActive {
            guard let latest = subscription.view.latest() else { continue }
            deliverLatest(latest.data, sequence: latest.sequence, to: subscription)
        }
    }

    /// The channel ended: the session ends, and its onDisconnect writes run.
    func closed() {
        submitWrites()
        services.directory.remove(self)
        for subscription in listens.subscriptions { detach(subscription) }
        listens.removeAll()
        conflated.removeAll()
        credentialsIfMade?.identityGeneration += 1
        let metrics = self.metrics
        let logger = services.logger
        let store = namespace.store
        // In order: after every registration the connection made (they were judged when registered).
        store.inOrder { [self] _ in
            let queued = onDisconnect.withLock { queue in
                defer { queue = OnDisconnectQueue() }
                return queue
            }
            guard !queued.isEmpty else { return }
            store.fireDisconnect(session: sessionID) { result in
                if case .failure(let error) = result {
                    metrics.rejectedWrites.increment()
                    logger.warning("onDisconnect writes failed", metadata: ["error": "\(error)"])
                } else if result != nil {
                    metrics.countWrite()
                }
            }
        }
    }

    // MARK: - Requests

    private func handle(_ message: ClientMessage) {
        switch message {
        case .control(.ping):
            send(.pong)
        case .control:
            break  // long-poll switch messages; nothing to do on a WebSocket
        case .request(let request):
            outstandingRequests += 1
            let limit = services.limits.maxOutstandingRequests
            if !readingPausedForAnswers, Int(outstandingRequests) >= max(1, limit / 2) {
                readingPausedForAnswers = true
                channel.pauseReading()
            }
            guard Int(outstandingRequests) <= limit else {
                metrics.refusedOutstanding.increment()
                send(.failure(request.number, status: .limitExceeded, message: """
                    at most \(limit) requests may await their answers per connection \
                    (gateway.maxOutstandingRequestsPerConnection)
                    """))
                return
            }
            if credentialsIfMade?.heldRequests != nil {
                credentialsIfMade?.heldRequests?.append(request)
                return
            }
            perform(request.action, request: request.number)
        }
    }

    func perform(_ action: ClientAction, request: Int) {
        switch action {
        case .put, .merge: break
        default: submitWrites()
        }
        guard appCheckAdmits(action, request: request) else { return }
        switch action {
        case .stats:
            send(.ok(request))
        case .appCheck(let token):
            presentAppCheck(token, request: request)
        case .unappCheck:
            dropAppCheck(request: request)
        case .auth(let auth):
            guard credentials.authAttempts.take(now: services.monotonicNanoseconds()) else {
                metrics.refusedAuths.increment()
                let limit = services.limits.maxAuthAttemptsPerSecond
                send(.failure(request, status: .limitExceeded,
                              message: "at most \(limit) auth attempts a second (gateway.maxAuthAttemptsPerSecond)"))
                return
            }
            authenticate(auth, request: request)
        case .unauth:
            changeIdentity(to: .unauthenticated)
            send(.ok(request))
            recheckListens()
        case .listen(let listen):
            guard listens[listen.key] != nil || listens.count < services.limits.maxListens else {
                metrics.refusedListens.increment()
                let limit = services.limits.maxListens
                send(.failure(request, status: .limitExceeded,
                              message: "at most \(limit) listens per connection (gateway.maxListensPerConnection)"))
                return
            }
            self.listen(listen, request: request)
        case .unlisten(let unlisten):
            if let subscription = listens.remove(unlisten.key) { detach(subscription) }
            send(.ok(request))
        case .put(let put):
            write(.set(put.target, put.value, expectedHash: put.hash), request: request)
        case .merge(let merge):
            write(.update(merge.path, merge.entries), request: request)
        case .onDisconnectPut(let put):
            register(.set(put.target, put.value, expectedHash: nil), request: request) { queue in
                queue.remember(put.value, at: put.target)
            }
        case .onDisconnectMerge(let merge):
            register(.update(merge.path, merge.entries), request: request) { queue in
                for entry in merge.entries { queue.remember(entry.value, at: entry.target.below(merge.path)) }
            }
        case .onDisconnectCancel(let path):
            namespace.store.inOrder { [self] _ in
                let queued = onDisconnect.withLock { queue in
                    queue.forget(path)
                    return queue
                }
                arm(queued) { [self] in loop.execute { self.send(.ok(request)) } }
            }
        case .get(let get):
            read(get, request: request)
        }
    }

    /// Judges an onDisconnect operation at its place in the order and, when the rules allow it, remembers it.
    private func register(_ write: StoreWrite, request: Int,
                          remember: @escaping @Sendable (inout OnDisconnectQueue) -> Void)
    {
        let gate = rulesGate
        namespace.store.inOrder { [self] snapshot in
            switch gate.registration(of: write, in: snapshot) {
            case .allowed: break
            case .denied: return loop.execute { self.deny(request) }
            case .invalid(let error):
                return loop.execute { self.send(.failure(request, status: error.wireStatus, message: error.wireMessage)) }
            }
            let limit = services.limits.maxOnDisconnects
            let queued = onDisconnect.withLock { queue -> OnDisconnectQueue? in
                var grown = queue
                remember(&grown)
                guard grown.entries.count <= limit else { return nil }
                queue = grown
                return queue
            }
            guard let queued else {
                metrics.refusedOnDisconnects.increment()
                return loop.execute {
                    self.send(.failure(request, status: .limitExceeded, message:
                        "at most \(limit) onDisconnect locations per connection (gateway.maxOnDisconnectPerConnection)"))
                }
            }
            arm(queued) { [self] in loop.execute { self.send(.ok(request)) } }
        }
    }

    /// Arms the connection's onDisconnect writes in the store (in a cluster, in every replica, so that a survivor
    /// runs them if this node dies) before `then` runs. On the sequencer.
    private func arm(_ queued: OnDisconnectQueue, then: @escaping @Sendable () -> Void) {
        namespace.store.armDisconnect(session: sessionID, write: queued.isEmpty ? nil : queued.write) { _ in then() }
    }

    /// Queues a write; the writes of one read pass go to the store together (one queue hop, one group commit),
    /// submitted before anything else the client asked for next, so requests still take effect in order.
    private func write(_ write: StoreWrite, request: Int) {
        writesAwaitingAnswers += 1
        if pendingWrites.isEmpty { loop.runAtEndOfPass { [self] in submitWrites() } }
        pendingWrites.append(write)
        pendingWriteRequests.append(request)
    }

    /// Submits the queued writes.
    private func submitWrites() {
        guard !pendingWrites.isEmpty else { return }
        let requests = pendingWriteRequests
        let writes = pendingWrites
        pendingWrites.removeAll()
        pendingWriteRequests.removeAll()
        namespace.store.write(batch: writes, by: rulesGate.writeCaller) { [self] index, result in
            loop.execute { self.answerWrite(result, request: requests[index]) }
        }
    }

    private func answerWrite(_ result: Result<WriteOutcome, StoreError>, request: Int) {
        writesAwaitingAnswers -= 1
        switch result {
        case .success:
            metrics.countWrite()
            send(.ok(request))
        case .failure(let error):
            metrics.rejectedWrites.increment()
            send(.failure(request, status: error.wireStatus, message: error.wireMessage))
        }
    }

    /// A `get`, answered from the tree at its place in the order. In a cluster that place comes after the log's head
    /// as well, so that the answer holds every write any node acknowledged before the get arrived (the replica may
    /// lag): the requests behind the get wait until it has its place, so they still take effect after it.
    private func read(_ get: GetRequest, request: Int) {
        guard namespace.store.isReplica else { return readInOrder(get, request: request) }
        holdRequests()
        namespace.store.awaitLogHead(resumingOn: { [loop] in loop.execute($0) }) { [self] in
            readInOrder(get, request: request)
            releaseHeldRequests()
        }
    }

    /// A `get`, answered from the tree at its place in the order.
    private func readInOrder(_ get: GetRequest, request: Int) {
        let gate = rulesGate
        let path = get.path
        let query = get.query
        let metrics = self.metrics
        namespace.store.inOrder { [self] snapshot in
            guard snapshot.isAvailable, gate.mayRead(path, query: query.loadsAllData ? nil : query, in: snapshot) else {
                loop.execute { self.deny(request) }
                return
            }
            metrics.reads.increment()
            let node = snapshot.root.descendant(at: path)
            guard !query.loadsAllData else { return answer(node, request: request) }
            // Filtering a large location is O(n log n): off the sequencer.
            DispatchQueue.global().async { self.answer(query.result(from: node), request: request) }
        }
    }

    private func answer(_ node: Node, request: Int) {
        loop.execute {
            self.send(.response(requestNumber: request, status: .ok, payload: .data(node)), orAnswer: request)
            self.loop.flushPending()
        }
    }

    // MARK: - Listens

    private func listen(_ listen: ListenRequest, request: Int) {
        if let previous = listens.remove(listen.key) { detach(previous) }
        let view = namespace.acquireView(at: listen.path, query: listen.viewQuery, metrics: metrics)
        let subscription = Subscription(
            subscriber: self, view: view, format: .wire(tag: listen.tag),
            filter: listen.tag == nil ? nil : listen.query, queryObject: listen.tag == nil ? nil : listen.queryObject,
            loop: loop, pollsLatest: coalesceSeconds != nil)
        listens.insert(subscription)
        schedulePolling()
        services.directory.listensChanged(by: 1)
        metrics.listens.increment()
        let unindexed = listen.tag != nil && !services.indexes(namespace.name).covers(listen.query.index, at: listen.path)
        let initial = InitialRequest(subscription: subscription, requestNumber: request, hash: listen.hash,
                                     warnings: unindexed ? [ResponsePayload.noIndexWarning] : [])
        namespace.subscribe(subscription, rulesGate: rulesGate, request: initial) { [self] in
            // Refused at its place in the order: the listen ends without having been served.
            subscription.isActive = false
            if listens.remove(subscription) { services.directory.listensChanged(by: -1) }
            deny(request)
        }
    }

    func detach(_ subscription: Subscription) {
        guard subscription.isActive else { return }
        subscription.isActive = false
        namespace.unsubscribe(subscription)
        services.directory.listensChanged(by: -1)
    }

    /// The view's data for a new listen: the data push (skipped when the client's hash says it has it, §6.6 step 4),
    /// then `ok`.
    func deliverInitial(_ data: Node, sequence: UInt64, request: InitialRequest) {
        let subscription = request.subscription
        if subscription.isActive, request.hash == nil || request.hash != Store.hash(of: data) {
            guard sendPush(EncodedPush(path: subscription.path, data: data), tag: subscription.tag) else {
                listens.remove(subscription)
                detach(subscription)
                send(.failure(request.requestNumber, status: .tooBig, message: ResponseStatus.tooBigMessage))
                return
            }
        }
        subscription.deliveredThrough = max(subscription.deliveredThrough, sequence)
        send(.listenOK(request.requestNumber, warnings: request.warnings))
    }

    /// Hands one view push (`frames`, already picked for the listen's tag, of view sequence `sequence`) to this
    /// connection; returns whether it was sent. Over the conflation threshold the listen stops taking pushes until
    /// the connection catches up, then gets the view's latest data in one push.
    func deliver(_ push: ByteChunk, sequence: UInt64, to subscription: Subscription) -> Bool {
        guard subscription.isActive, sequence > subscription.deliveredThrough else { return false }
        if subscription.isConflated {
            metrics.pushesConflated.increment()
            return false
        }
        let threshold = services.limits.conflationThresholdBytes
        // Output is flushed at the end of the loop's pass, so a burst of pushes can pile up even for a reader that
        // keeps up: over the threshold, see what the transport takes before deciding the peer is behind.
        if let direct = directWebSocket {
            return direct._withUnsafeGuaranteedRef { webSocket in
                if webSocket.pendingOutboundBytes > threshold {
                    webSocket.flushNow()
                    if webSocket.pendingOutboundBytes > threshold { return conflate(subscription) }
                }
                webSocket.sendFrame(push)
                subscription.deliveredThrough = sequence
                return true
            }
        }
        if channel.pendingOutboundBytes > threshold {
            channel.flushNow()
            if channel.pendingOutboundBytes > threshold { return conflate(subscription) }
        }
        channel.send(sharedFrames: push)
        subscription.deliveredThrough = sequence
        return true
    }

    /// Stops a listen's pushes until the session catches up (``catchUp()``); returns `false`, nothing was sent.
    private func conflate(_ subscription: Subscription) -> Bool {
        subscription.isConflated = true
        conflated.append(subscription)
        metrics.conflations.increment()
        metrics.pushesConflated.increment()
        return false
    }

    /// The latest data of a conflated listen.
    private func deliverLatest(_ data: Node, sequence: UInt64, to subscription: Subscription) {
        guard subscription.isActive, subscription.isConflated else { return }
        subscription.isConflated = false
        if sequence > subscription.deliveredThrough {
            _ = sendPush(EncodedPush(path: subscription.path, data: data), tag: subscription.tag)
            subscription.deliveredThrough = sequence
        }
    }

    // MARK: - Sending

    /// Sends a message, after any conflated listens caught up; returns `false` when it is too large to frame.
    @discardableResult
    func send(_ message: ServerMessage) -> Bool {
        catchUp()
        guard channel.send(message: message.encoded()) else { return false }
        if case .response = message { answered() }
        return true
    }

    /// Counts an answer sent; reads again once a quarter of the outstanding-request limit is left.
    private func answered() {
        outstandingRequests -= 1
        if readingPausedForAnswers,
           Int(outstandingRequests) <= services.limits.maxOutstandingRequests / 4
        {
            readingPausedForAnswers = false
            channel.resumeReading()
        }
    }

    /// Sends a response that may be too large to frame; answers `too_big` instead when it is.
    private func send(_ message: ServerMessage, orAnswer request: Int) {
        if !send(message) { send(.failure(request, status: .tooBig, message: ResponseStatus.tooBigMessage)) }
    }

    private func sendPush(_ push: EncodedPush, tag: Int?) -> Bool {
        channel.send(message: push.message(tag: tag))
    }

    // MARK: - Errors

    /// Answers a request the rules refuse.
    private func deny(_ request: Int) {
        send(.failure(request, status: .permissionDenied, message: ResponseStatus.permissionDeniedMessage))
    }

    /// A message that could not be parsed: answer its request when it has a number, ignore unknown control
    /// types, otherwise report the error and close (the byte stream can no longer be trusted).
    private func reject(_ error: WireError) {
        metrics.protocolErrors.increment()
        if let request = error.requestNumber {
            send(.failure(request, status: .invalidRequest, message: error.description))
            return
        }
        if case .unknownControlType = error { return }
        send(.error(error.description))
        switch error {
        case .messageTooLarge, .tooManyFrames: failConnection(code: 1009, reason: error.description)
        default: failConnection(code: 1002, reason: error.description)
        }
    }

    private func failConnection(code: UInt16, reason: String) {
        channel.close(code: code, reason: String(reason.utf8.prefix(120)) ?? "protocol error")
    }
}

extension ResponseStatus {
    /// A request the server could not accept as sent: malformed, invalid data, an unknown action or server value.
    static let invalidRequest = ResponseStatus(rawValue: "invalid_request")
    /// The `d` of a `permission_denied` answer (wire-protocol.md §6.6).
    static let permissionDeniedMessage = "Permission denied"
    /// The `d` of a `too_big` answer (the SDKs' own wording of the condition).
    static let tooBigMessage = "The data requested exceeds the maximum size that can be accessed with a single request."
}

extension StoreError {
    /// The wire status for a rejected write.
    var wireStatus: ResponseStatus {
        switch self {
        case .stale: return .dataStale
        case .invalidPriority, .serverValue, .tooLarge: return .invalidRequest
        case .denied: return .permissionDenied
        case .persistence, .unavailable, .diskFull: return .unavailable
        }
    }

    /// The `d` of the failure answer.
    var wireMessage: String {
        switch self {
        case .stale: return "Transaction hash does not match"
        case .denied: return ResponseStatus.permissionDeniedMessage
        default: return description
        }
    }
}

/// Random session ids for the hello (§3.2), and long-poll ids and passwords: `[A-Za-z0-9]`.
enum SessionID {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
    /// A hello's session id: 15 characters (89 random bits), which a `String` holds inline, without a heap buffer
    /// per connection.
    static let sessionLength = 15
    /// A long-poll password: 32 characters (190 random bits).
    static let passwordLength = 32

    static func make(length: Int = sessionLength) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<length).map { _ in alphabet[Int(generator.next(upperBound: UInt32(alphabet.count)))] }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// What a wire session needs only to open (``WireSession/open()``): the hello's host, the previous session to
/// replace, and the App Check token of the URL or a header.
private final class SessionOpening {
    let host: String
    let lastSessionID: String?
    let appCheckToken: String?

    init(host: String, lastSessionID: String?, appCheckToken: String?) {
        self.host = host
        self.lastSessionID = lastSessionID
        self.appCheckToken = appCheckToken
    }
}
