import CoreMetrics
import DataModel
import Dispatch
import HTTPServer
import Logging
import Primitives
import Store
import Synchronization
import Transport

/// One REST event stream (`GET` with `Accept: text/event-stream`, rest-api.md §9), owned by its connection's loop.
///
/// It listens on the same shared ``View`` as WebSocket listens of that location and query, so a write is turned
/// into events once for every stream of the view. The first event is the location's value; then a `put` or `patch`
/// per change, a `keep-alive` after every quiet period, and `cancel` or `auth_revoked` (ending the stream) when the
/// rules or the credential no longer allow it. A client that stops reading is cut off once its unsent bytes reach
/// ``GatewayConfiguration/streamCutOffBytes``: writers never wait for it.
final class EventStream: ViewSubscriber, @unchecked Sendable {
    private let stream: ResponseStream
    private let gateway: Gateway
    private let namespace: Namespace
    /// The stream's namespace, for re-checks after its rules changed.
    var namespaceName: String { namespace.name }
    private let path: Path
    private let query: QueryParams
    private let identity: ConnectionIdentity
    private let caller: String
    let loop: EventLoop

    // Owned by `loop`:
    private var subscription: Subscription?
    private var sentSinceTick = false
    private var keepAliveTimer: (any DispatchSourceTimer)?
    private var ended = false

    init(stream: ResponseStream, gateway: Gateway, namespace: Namespace, path: Path, query: QueryParams,
         identity: ConnectionIdentity, caller: String)
    {
        self.stream = stream
        self.gateway = gateway
        self.namespace = namespace
        self.path = path
        self.query = query
        self.identity = identity
        self.caller = caller
        self.loop = stream.loop
    }

    /// Subscribes to the view and starts the heartbeat and the credential's expiry; call on ``loop``.
    func start(acceptedUntil: Double?) {
        loop.assertInLoop()
        stream.onClose = { [self] in loop.execute { self.streamClosed() } }
        gateway.streams.add(self)
        gateway.metrics.streamsOpened.increment()
        let view = namespace.acquireView(at: path, query: query, metrics: gateway.metrics)
        let subscription = Subscription(
            subscriber: self, view: view, format: .eventStream,
            filter: query.loadsAllData ? nil : query, queryObject: nil, loop: loop)
        self.subscription = subscription
        let initial = InitialRequest(subscription: subscription, requestNumber: 0, hash: nil, warnings: [])
        namespace.subscribe(subscription, rulesGate: gate, request: initial) { [self] in
            // The rules changed between the request's check and its place in the order.
            end(with: ServerSentEvents.cancel)
        }
        startKeepAlive()
        if let acceptedUntil { scheduleExpiry(at: acceptedUntil) }
    }

    // MARK: - ViewSubscriber

    func deliverInitial(_ data: Node, sequence: UInt64, request: InitialRequest) {
        guard let subscription, subscription === request.subscription, subscription.isActive else { return }
        send(ServerSentEvents.put(at: .root, data: data))
        subscription.deliveredThrough = max(subscription.deliveredThrough, sequence)
    }

    func deliver(_ push: ByteChunk, sequence: UInt64, to subscription: Subscription) -> Bool {
        guard subscription.isActive, !ended, sequence > subscription.deliveredThrough else { return false }
        subscription.deliveredThrough = sequence
        if stream.pendingOutboundBytes > gateway.configuration.streamCutOffBytes {
            stream.flushNow()
            if stream.pendingOutboundBytes > gateway.configuration.streamCutOffBytes {
                gateway.metrics.streamsCutOff.increment()
                gateway.logger.info("event stream cut off: its client stopped reading (\(caller))")
                ended = true
                detach()
                stream.cutOff()
                return false
            }
        }
        stream.sendChunk(push)
        sentSinceTick = true
        return true
    }

    // MARK: - Access

    /// Ends the stream with `cancel` when the rules in force at this point of the namespace's order no longer let
    /// it read.
    func recheck() {
        guard !ended else { return }
        let gate = self.gate
        let path = self.path
        let filter = query.loadsAllData ? nil : query
        namespace.store.inOrder { [self] snapshot in
            guard !gate.mayRead(path, query: filter, in: snapshot) else { return }
            loop.execute { self.end(with: ServerSentEvents.cancel) }
        }
    }

    /// The rules gate of the stream's identity.
    private var gate: RulesGate {
        RulesGate(identity: identity, caller: caller)
    }

    private func scheduleExpiry(at acceptedUntil: Double) {
        let delay = max(0, acceptedUntil - gateway.configuration.clock() / 1000)
        loop.queue.asyncAfter(deadline: .now() + .milliseconds(Int(min(delay, 86_400 * 365) * 1000))) { [weak self] in
            self?.end(with: ServerSentEvents.authRevoked)
        }
    }

    // MARK: - Lifecycle

    private func startKeepAlive() {
        let period = max(0.05, gateway.configuration.streamKeepAliveSeconds)
        let timer = DispatchSource.makeTimerSource(queue: loop.queue)
        timer.schedule(deadline: .now() + period, repeating: period)
        timer.setEventHandler { [weak self] in
            guard let self, !self.ended else { return }
            if !self.sentSinceTick { self.send(ServerSentEvents.keepAlive) }
            self.sentSinceTick = false
            self.loop.flushPending()
        }
        keepAliveTimer = timer
        timer.resume()
    }

    private func send(_ event: [UInt8]) {
        stream.send(event)
        sentSinceTick = true
    }

    /// Sends a final event and finishes the response.
    private func end(with event: [UInt8]) {
        loop.assertInLoop()
        guard !ended else { return }
        ended = true
        send(event)
        detach()
        stream.finish()
        loop.flushPending()
    }

    private func detach() {
        keepAliveTimer?.cancel()
        keepAliveTimer = nil
        guard let subscription else { return }
        self.subscription = nil
        if subscription.isActive {
            subscription.isActive = false
            namespace.unsubscribe(subscription)
        }
        gateway.streams.remove(self)
    }

    private func streamClosed() {
        ended = true
        detach()
    }
}

/// The live event streams, for rule re-checks and the gauges.
final class StreamDirectory: Sendable {
    private let streams = Mutex<[ObjectIdentifier: EventStream]>([:])

    func add(_ stream: EventStream) {
        streams.withLock { $0[ObjectIdentifier(stream)] = stream }
    }

    func remove(_ stream: EventStream) {
        streams.withLock { $0[ObjectIdentifier(stream)] = nil }
    }

    var all: [EventStream] { streams.withLock { Array($0.values) } }

    var count: Int { streams.withLock { $0.count } }
}
