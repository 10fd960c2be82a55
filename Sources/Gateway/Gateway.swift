import CoreMetrics
import Auth
import Authorization
import DataModel
import HTTP1
import HTTPServer
import Logging
import Rules
import Store
import Synchronization
import Transport
import Wire

/// The Firebase Realtime Database front end: routes `/.ws` to wire-protocol sessions and serves `/.metrics`.
///
/// It owns the namespaces (opened on first use, each a ``Store`` with its view registry) and the directory of live
/// sessions. Call ``route(_:context:)`` from the HTTP server; call ``close()`` after the server stopped.
public final class Gateway: Router {
    /// The configuration.
    public let configuration: GatewayConfiguration
    /// Counters and gauges.
    public let metrics: GatewayMetrics
    let logger: Logger
    /// Verifies `auth` / `gauth` credentials.
    let tokenVerifier: TokenVerifier
    let sessions: SessionDirectory
    /// What its wire sessions need from it (one for all of them).
    let sessionServices: SessionServices
    /// The live long-poll sessions (long-polling.md).
    let longPolls = LongPollDirectory()
    /// The live REST event streams.
    let streams = StreamDirectory()
    private let namespaces = Mutex<[String: Namespace]>([:])
    let server = Mutex<HTTPServer?>(nil)
    /// Rule evaluations as they happen, while a console watches (the control plane's live view).
    public let evaluations = EvaluationFeed()

    /// A gateway; namespaces open lazily.
    public init(configuration: GatewayConfiguration, tokenVerifier: TokenVerifier, logger: Logger) {
        self.configuration = configuration
        self.tokenVerifier = tokenVerifier
        self.logger = logger
        let metrics = GatewayMetrics()
        let sessions = SessionDirectory()
        let library = configuration.rules
        self.metrics = metrics
        self.sessions = sessions
        sessionServices = SessionServices(
            limits: SessionLimits(configuration), clock: configuration.clock, metrics: metrics,
            tokenVerifier: tokenVerifier, appCheck: configuration.appCheck, directory: sessions, logger: logger,
            indexes: { IndexDeclarations(library.holder(for: $0).rules?.indexes ?? []) })
    }

    public func route(_ request: HTTPRequest, context: RequestContext) -> Route {
        Self.routes.route(request, context: context, owner: self) ?? restRoute(request, context: context)
    }

    /// `/.ws`, `/.lp` and `/.metrics`; everything else is REST. (The admin endpoints and the console are the control
    /// plane's, routed before the gateway by the executable.)
    private static let routes: RouteTable<Gateway> = {
        var table = RouteTable<Gateway>()
        table.add(.exact("/.ws")) { gateway, request, _ in gateway.webSocketRoute(request) }
        table.add(.exact("/.lp")) { gateway, request, _ in gateway.longPollRoute(request) }
        table.add(.exact("/.metrics"), methods: ["GET"]) { gateway, _, _ in .respond(gateway.metricsResponse()) }
        return table
    }()

    private func webSocketRoute(_ request: HTTPRequest) -> Route {
        let parameters = ConnectionParameters(query: request.head.query ?? "")
        if let transportSession = parameters.transportSessionID {
            return upgradeRoute(transportSession: transportSession, host: request.head.headers["Host"] ?? "localhost")
        }
        let namespace: Namespace
        switch realtimeNamespace(request.head, parameters: parameters) {
        case .success(let opened): namespace = opened
        case .failure(.notCreated(let name)):
            let reason = NamespaceProblem.notCreated(name).description
            return .webSocket { _ in
                RefusedSession(message: .shutdown(reason: reason), closeCode: 1008, closeReason: "namespace refused")
            }
        case .failure(let problem): return .respond(problem.response)
        }
        let host = request.head.headers["Host"] ?? "localhost"
        let crossSite = CrossSiteRequest.isCrossSite(request.head)
        let coalesce = parameters.coalesceMilliseconds.map { Double(min(max($0, 10), 10_000)) / 1000 }
        let appCheckToken = parameters.appCheckToken ?? request.head.headers["X-Firebase-AppCheck"]
        return .webSocket { [self] webSocket in
            WireSession(
                channel: webSocket, loop: webSocket.loop, namespace: namespace, services: sessionServices, host: host,
                lastSessionID: parameters.lastSessionID, openedByCrossSitePage: crossSite, coalesceSeconds: coalesce,
                appCheckToken: appCheckToken)
        }
    }

    /// The namespace a realtime connection (`/.ws`, or a long-poll start) names, opened or created as
    /// ``namespace(named:mayCreate:)`` allows: the admin credential on the request may create it. Refusals are
    /// counted.
    func realtimeNamespace(_ head: HTTPRequestHead, parameters: ConnectionParameters)
        -> Result<Namespace, NamespaceProblem>
    {
        let name = parameters.namespace ?? configuration.defaultNamespace
        let result = namespace(named: name, mayCreate: upgradeCarriesAdminCredential(head))
        if case .failure(.notCreated) = result { metrics.namespacesRefused.increment() }
        return result
    }

    /// Opens the default namespace and waits until it loaded, so that the server starts only with its data (and
    /// refuses to start when the data directory is locked or damaged).
    public func openDefaultNamespace() throws {
        let name = configuration.defaultNamespace
        switch namespace(named: name, mayCreate: true) {
        case .failure(let problem): throw problem
        case .success(let namespace):
            if let failure = namespace.store.waitUntilLoaded() { throw NamespaceProblem.storeFailed(name, failure) }
        }
    }

    /// The namespace called `name`, opened on first use. Its store loads from disk on its own sequencer, so no
    /// event loop and no other namespace waits for it; its clients' operations queue behind the load. A namespace
    /// that fails to load is closed again (its operations fail) and retried by the next connection.
    ///
    /// A namespace exists when its directory does, or in cluster mode when any node created it. One that does not
    /// exist yet is created only when it is the default one, when
    /// ``GatewayConfiguration/namespaceAllowList`` names it, or when `mayCreate` (the caller holds the admin
    /// credential; asked only then, since it may verify a token); otherwise nothing is opened and nothing is written
    /// to disk.
    func namespace(named name: String, mayCreate: @autoclosure () -> Bool) -> Result<Namespace, NamespaceProblem> {
        guard DataDirectory.isValidNamespace(name) else { return .failure(.invalidName(name)) }
        return namespaces.withLock { open in
            if let namespace = open[name] { return .success(namespace) }
            guard name == configuration.defaultNamespace || configuration.createsNamespacesOnFirstUse
                || configuration.namespaceAllowList.allows(name)
                || configuration.dataDirectory.map({ DataDirectory.holdsNamespace($0, namespace: name) }) == true
                || configuration.existsInCluster?(name) == true
                || mayCreate()
            else {
                logger.notice("namespace.refused: a client named a namespace that does not exist", metadata: [
                    "namespace": "\(name)", "allow_with": "data.namespaces (--namespaces)"])
                return .failure(.notCreated(name))
            }
            guard open.count < configuration.maxNamespaces else { return .failure(.tooMany(configuration.maxNamespaces)) }
            var storeConfiguration = StoreConfiguration(clock: configuration.clock,
                                                        rulesCompiler: rulesCompiler(namespace: name))
            if let replicatedLog = configuration.replicatedLog {
                storeConfiguration.replication = replicatedLog(name)
                let (logger, metrics) = (self.logger, self.metrics)
                storeConfiguration.divergence = { mine, theirs in
                    metrics.divergences.increment()
                    logger.critical("cluster.divergence: replicas hold different trees", metadata: [
                        "namespace": "\(name)", "position": "\(mine.position)", "node": "\(mine.node)",
                        "hash": "\(mine.hash)", "other_node": "\(theirs.node)", "other_hash": "\(theirs.hash)",
                    ])
                }
                storeConfiguration.replicaRebuilt = { reason in
                    logger.error("cluster.rebuild: the replica rebuilds its tree from the log",
                                 metadata: ["namespace": "\(name)", "reason": "\(reason)"])
                }
                storeConfiguration.cutOff = { [weak self] cutOff in
                    guard let self else { return }
                    guard cutOff else {
                        return logger.notice("cluster.reachable: the node reaches the log again", metadata: [
                            "namespace": "\(name)"])
                    }
                    logger.warning("""
                        cluster.cut_off: the node cannot reach the log; it acknowledges nothing, and connections \
                        without writes or onDisconnect writes awaiting the log close so their clients go elsewhere
                        """, metadata: ["namespace": "\(name)"])
                    for session in sessions.all where session.namespace.name == name {
                        session.loop.execute { session.closeUnlessAwaitingTheLog() }
                    }
                }
                storeConfiguration.declaredDown = { [weak self] in
                    guard let self else { return }
                    logger.warning(
                        "cluster.declared_down: heartbeats missed the bound; connections close to register again",
                        metadata: ["namespace": "\(name)"])
                    for session in sessions.all where session.namespace.name == name {
                        session.loop.execute { session.closeToRegisterAgain() }
                    }
                }
            } else if let root = configuration.dataDirectory,
               let directory = DataDirectory.namespaceDirectory(root, namespace: name)
            {
                var persistence = PersistenceConfiguration(directory: directory)
                persistence.fsyncPolicy = configuration.fsyncPolicy
                storeConfiguration.persistence = persistence
                storeConfiguration.journalEvents = journalEventReporter(namespace: name)
            }
            let namespace = Namespace(name: name, configuration: storeConfiguration) { [self] result in
                switch result {
                case .success(let report):
                    logger.info("opened namespace", metadata: [
                        "namespace": "\(name)", "replayed": "\(report.replayedRecords)",
                        "snapshot_position": "\(report.snapshotPosition)", "seconds": "\(report.seconds)"])
                    for discard in report.discards { logger.warning("namespace \(name): \(discard)") }
                case .failure(let error):
                    logger.error("cannot open namespace", metadata: ["namespace": "\(name)", "error": "\(error)"])
                    namespaces.withLock { open in
                        if open[name]?.store.isLoaded == false { open[name] = nil }
                    }
                    // Its clients get the reason and reconnect; the next connection tries to open it again.
                    for session in sessions.all where session.namespace.name == name && session.namespace.store.hasFailed {
                        session.loop.execute { session.closeForUnavailableNamespace() }
                    }
                }
            }
            open[name] = namespace
            // Under the lock, so a rules reload that iterates the namespaces cannot slip in before it.
            namespace.store.installRules(source: configuration.rules.holder(for: name).source)
            return .success(namespace)
        }
    }

    /// Logs and counts what happens to a namespace's journal.
    private func journalEventReporter(namespace name: String) -> @Sendable (JournalEvent) -> Void {
        let (logger, metrics) = (self.logger, self.metrics)
        return { event in
            switch event {
            case .outOfSpace(let error):
                metrics.diskFull.increment()
                logger.error("store.disk_full: writes are refused until space is freed; those already applied wait",
                             metadata: ["namespace": "\(name)", "error": "\(error)"])
            case .spaceRecovered:
                logger.notice("store.disk_space_recovered: waiting writes are durable, writes are accepted again",
                              metadata: ["namespace": "\(name)"])
            case .failed(let error):
                metrics.journalFailures.increment()
                logger.critical("""
                    store.journal_failed: the namespace acknowledges no more writes; restart to recover from what \
                    is on disk
                    """, metadata: ["namespace": "\(name)", "error": "\(error)"])
            }
        }
    }

    /// Compiles a rules revision of a namespace's log into the policy in force while it is: the one every read,
    /// write and onDisconnect of the namespace is judged by, reporting live decisions to the console's feed and
    /// the denial log. The configured rules are reused when the text is theirs, so their coverage counts every
    /// decision.
    func rulesCompiler(namespace: String) -> RulesCompiler {
        let library = configuration.rules
        let observer = LiveDecisions(
            feed: evaluations, explainer: configuration.explainDenials ? DenialExplainer(logger: logger) : nil,
            namespace: namespace)
        return RulesPolicy.compiler(observer: observer) { library.holder(for: namespace).rules(compiledFrom: $0) }
    }

    /// Puts the rules now in force into the logs of the open namespaces `names` (`nil`: those that use the default
    /// rules), then re-checks their listens and streams against them (after a reload or an admin upload).
    /// Operations that reach a namespace after this call are judged by the new rules.
    public func rulesChanged(in names: [String]? = nil) {
        let library = configuration.rules
        let changed = namespaces.withLock { open in
            let affected = names.map { names in names.compactMap { open[$0] } }
                ?? open.values.filter { library.usesDefaults($0.name) }
            for namespace in affected { namespace.store.installRules(source: library.holder(for: namespace.name).source) }
            return Set(affected.map(\.name))
        }
        guard !changed.isEmpty else { return }
        recheckListens(in: changed)
    }

    /// The names of the open namespaces, sorted.
    public var openNamespaceNames: [String] {
        namespaces.withLock { $0.keys.sorted() }
    }

    /// Includes the HTTP server's transport figures (connections, bytes out, slow consumers) in `/.metrics`.
    public func reportTransportMetrics(of server: HTTPServer) {
        self.server.withLock { $0 = server }
        server.whenShuttingDown { [longPolls] in
            for channel in longPolls.all { channel.loop.execute { channel.serverStopping() } }
        }
    }

    /// The HTTP server's counters now (`nil` before ``reportTransportMetrics(of:)``).
    var transportFigures: TransportFigures? {
        server.withLock { $0.map(TransportFigures.init) }
    }

    /// The live views of every open namespace.
    var viewCount: Int {
        namespaces.withLock { Array($0.values) }.reduce(0) { $0 + $1.registry.count }
    }

    /// The `.indexOn` declarations of the rules in force in `namespace`.
    func indexes(in namespace: String) -> IndexDeclarations {
        sessionServices.indexes(namespace)
    }

    /// Re-checks the listens of every connection to the namespaces `names` against the rules now in force.
    func recheckListens(in names: Set<String>) {
        for session in sessions.all where names.contains(session.namespace.name) {
            session.loop.execute { session.recheckListens() }
        }
        for stream in streams.all where names.contains(stream.namespaceName) { stream.loop.execute { stream.recheck() } }
    }

    /// Closes every namespace's store (final snapshot, journals closed); call once the server has stopped.
    public func close() {
        let open = namespaces.withLock { open in
            defer { open.removeAll() }
            return Array(open.values)
        }
        for namespace in open {
            do throws(JournalError) {
                try namespace.store.close()
            } catch {
                logger.error("closing namespace failed", metadata: ["namespace": "\(namespace.name)", "error": "\(error)"])
            }
        }
    }

    private func metricsResponse() -> HTTPResponse {
        let open = namespaces.withLock { Array($0.values) }
        let views = open.reduce(0) { $0 + $1.registry.count }
        let transport = server.withLock { $0.map(TransportFigures.init) }
        let coverage = configuration.rules.defaults.rules.map { RuleCoverageExposition($0.coverage).bytes } ?? []
        let body = metrics.exposition(
            sessions: sessions.count, longPolls: longPolls.count, listens: sessions.listenCount, views: views, namespaces: open.count,
            streams: streams.count,
            extra: (transport?.exposition ?? []) + ProcessFigures().exposition + coverage + keyExposition)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; version=0.0.4")
        return HTTPResponse(status: .ok, headers: headers, body: body)
    }
}

/// Why a connection's namespace is not available.
enum NamespaceProblem: Error, CustomStringConvertible {
    case invalidName(String)
    /// The namespace does not exist, and the caller may not create it.
    case notCreated(String)
    case tooMany(Int)
    case storeFailed(String, JournalError)

    var description: String {
        switch self {
        case .invalidName(let name): return "invalid namespace \"\(name.prefix(80))\": use 1-63 of a-z A-Z 0-9 - _"
        case .notCreated(let name):
            return "namespace \(name) does not exist: this server creates namespaces on first use only on loopback; "
                + "list it in data.namespaces (--namespaces \(name), or '*' for any) or create it with the admin "
                + "credential"
        case .tooMany(let limit): return "too many namespaces open (limit \(limit))"
        case .storeFailed(let name, let error): return "namespace \(name) is unavailable: \(error)"
        }
    }

    var response: HTTPResponse {
        switch self {
        case .invalidName: return .error(.badRequest, message: description)
        case .notCreated: return .error(.notFound, message: description)
        case .tooMany, .storeFailed: return .error(.serviceUnavailable, message: description)
        }
    }
}
