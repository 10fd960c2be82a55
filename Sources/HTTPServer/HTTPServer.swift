import Dispatch
import HTTP1
import Synchronization
import Logging
import TLS
import Transport

/// Canopy's HTTP/1.1 + WebSocket server on Dispatch: listeners, event loops, built-in endpoints
/// (`/.health`, the optional echo and broadcast endpoints) and graceful shutdown. Everything
/// else is routed to the ``Router`` the gateway supplies.
public final class HTTPServer: @unchecked Sendable {
    // Immutable after `start()` except `listeners`, which `start`/`shutdown` touch from the caller's thread.

    /// The configuration the server runs with.
    public let configuration: ServerConfiguration
    /// Connection counters.
    public let metrics = ServerMetrics()
    let logger: Logger
    private let router: any Router
    private let group: EventLoopGroup
    private let broadcastHub: BroadcastHub
    private let builtInRoutes: RouteTable<Void>
    let webSocketUpgrade: WebSocketUpgrade
    /// Water marks, idle timeout and inbound rate limit from the configuration, shared by every connection.
    let connectionPolicy: ConnectionPolicy
    /// ``ServerConfiguration/handshakeTimeoutSeconds`` in nanoseconds.
    let handshakeTimeoutNanoseconds: UInt64
    private var listeners: [Listener] = []
    private let shutdownWork = Mutex<[@Sendable () -> Void]>([])
    private var tlsContext: TLSContext?

    /// Creates a server; nothing is bound until ``start()``.
    public init(configuration: ServerConfiguration, router: any Router, logger: Logger) {
        self.configuration = configuration
        self.router = router
        self.logger = logger
        self.group = EventLoopGroup(count: configuration.eventLoops > 0 ? configuration.eventLoops : System.coreCount)
        self.broadcastHub = BroadcastHub(group: group)
        self.builtInRoutes = Self.builtInRoutes(configuration, hub: broadcastHub)
        self.webSocketUpgrade = WebSocketUpgrade(configuration: configuration)
        self.connectionPolicy = ConnectionPolicy(
            limits: configuration.outboundLimits,
            idleTimeoutNanoseconds: MonotonicClock.nanoseconds(fromSeconds: configuration.idleTimeoutSeconds),
            inboundRateLimit: configuration.inboundRateLimit)
        self.handshakeTimeoutNanoseconds = MonotonicClock.nanoseconds(fromSeconds: configuration.handshakeTimeoutSeconds)
    }

    /// The event loops connections run on.
    public var eventLoops: EventLoopGroup { group }

    /// Binds the listeners and starts accepting.
    ///
    /// - Returns: the bound plain address, then the TLS address when TLS is configured.
    @discardableResult
    public func start() throws -> [SocketAddress] {
        ResourceLimits.ignoreSIGPIPE()
        let overflow = HTTPResponse.error(.serviceUnavailable, message: "too many connections").encodedClosingConnection()

        let plain = try Listener(
            address: SocketAddress(host: configuration.host, port: configuration.port), group: group,
            maxConnections: configuration.maxConnections, overflowResponse: overflow
        ) { [unowned self] connection in self.accept(connection, tls: nil) }
        listeners.append(plain)

        if let tlsConfiguration = configuration.tls {
            let context = try TLSContext.server(
                certificateChainPath: tlsConfiguration.certificatePath, privateKeyPath: tlsConfiguration.privateKeyPath)
            tlsContext = context
            let secure = try Listener(
                address: SocketAddress(host: configuration.host, port: tlsConfiguration.port), group: group,
                maxConnections: configuration.maxConnections, overflowResponse: []
            ) { [unowned self] connection in self.accept(connection, tls: context) }
            listeners.append(secure)
        }
        for listener in listeners { listener.start() }
        return listeners.map(\.boundAddress)
    }

    /// Live connections across all listeners.
    public var liveConnections: Int { listeners.reduce(0) { $0 + $1.liveConnections.value } }

    /// Counts a session that has no connection of its own (a long-poll session, which comes and goes on requests)
    /// as a live connection: `false`, and nothing counted, when ``ServerConfiguration/maxConnections`` are live.
    /// Each admitted session calls ``releaseSession()`` once when it ends.
    public func admitSession() -> Bool {
        guard let counter = listeners.first?.liveConnections else { return true }
        counter.add(1)
        guard liveConnections <= configuration.maxConnections else {
            counter.add(-1)
            return false
        }
        return true
    }

    /// Ends a session counted by ``admitSession()``.
    public func releaseSession() {
        listeners.first?.liveConnections.add(-1)
    }

    /// Runs `work` when ``shutdown()`` begins, after the listeners stopped (sessions that are not connections end
    /// there, so the shutdown need not wait for them).
    public func whenShuttingDown(_ work: @escaping @Sendable () -> Void) {
        shutdownWork.withLock { $0.append(work) }
    }

    /// Connections refused at the connection limit.
    public var refusedConnections: UInt64 { listeners.reduce(0) { $0 + $1.refusedConnections.load } }

    private func accept(_ connection: Connection, tls: TLSContext?) {
        metrics.accepted.increment()
        var session: TLSSession?
        if let tls {
            do {
                session = try TLSSession(context: tls)
            } catch {
                logger.error("tls.session_failed", metadata: ["error": "\(error)"])
                connection.close(reason: .local("TLS session could not be created"))
                return
            }
        }
        connection.handler = ServerConnection(connection: connection, server: self, tls: session)
    }

    func connectionClosed(reason: CloseReason) {
        metrics.recordClose(reason)
        if reason == .slowConsumer {
            logger.info("connection.slow_consumer_closed")
        }
    }

    // MARK: - Routing

    func route(_ request: HTTPRequest, context: RequestContext) -> Route {
        builtInRoutes.route(request, context: context, owner: ()) ?? router.route(request, context: context)
    }

    /// The server's own endpoints: health, and the optional echo and broadcast WebSockets.
    private static func builtInRoutes(_ configuration: ServerConfiguration, hub: BroadcastHub) -> RouteTable<Void> {
        var table = RouteTable<Void>()
        table.add(.exact("/.health")) { _, _, _ in
            .respond(.json(status: .ok, body: Array(#"{"status":"ok"}"#.utf8)))
        }
        if let echoPath = configuration.echoPath {
            table.add(.exact(echoPath)) { _, _, _ in .webSocket { _ in EchoEndpoint() } }
        }
        if let broadcastPath = configuration.broadcastPath {
            table.add(.exact(broadcastPath)) { _, _, _ in .webSocket { _ in BroadcastEndpoint(hub: hub) } }
        }
        return table
    }

    // MARK: - Shutdown

    /// Graceful shutdown: stops accepting, asks every connection to close (WebSocket 1001),
    /// waits until all are gone or the deadline passes, then closes what is left.
    /// Blocks the calling thread (a process edge: the signal handler or a test).
    public func shutdown() {
        for listener in listeners { listener.stop() }
        for work in shutdownWork.withLock({ $0 }) { work() }
        for loop in group.loops {
            loop.queue.sync {
                for connection in loop.openConnections { connection.shutDown() }
                loop.flushPending()
            }
        }
        let deadline = MonotonicClock.nowNanoseconds() &+ MonotonicClock.nanoseconds(fromSeconds: configuration.shutdownDeadlineSeconds)
        while liveConnections > 0 && MonotonicClock.nowNanoseconds() < deadline {
            usleepMilliseconds(10)
        }
        for loop in group.loops {
            loop.queue.sync {
                for connection in loop.openConnections { connection.close(reason: .shutdown) }
            }
        }
        logger.info("server.stopped", metadata: ["connections.left": "\(liveConnections)"])
    }
}

private func usleepMilliseconds(_ milliseconds: Int) {
    let semaphore = DispatchSemaphore(value: 0)
    _ = semaphore.wait(timeout: .now() + .milliseconds(milliseconds))
}
