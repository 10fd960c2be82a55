import Auth
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
    public let metrics = GatewayMetrics()
    let logger: Logger
    /// Verifies `auth` / `gauth` credentials.
    let tokenVerifier: TokenVerifier
    let sessions = SessionDirectory()
    /// The live REST event streams.
    let streams = StreamDirectory()
    private let namespaces = Mutex<[String: Namespace]>([:])
    private let server = Mutex<HTTPServer?>(nil)

    /// A gateway; namespaces open lazily.
    public init(configuration: GatewayConfiguration, tokenVerifier: TokenVerifier, logger: Logger) {
        self.configuration = configuration
        self.tokenVerifier = tokenVerifier
        self.logger = logger
    }

    public func route(_ request: HTTPRequest, context: RequestContext) -> Route {
        switch request.head.path {
        case "/.ws":
            return webSocketRoute(request)
        case "/.metrics" where request.head.method == "GET":
            return .respond(metricsResponse())
        case let path where Self.adminPaths.contains(path):
            return adminRoute(request)
        default:
            return restRoute(request, context: context)
        }
    }

    private func webSocketRoute(_ request: HTTPRequest) -> Route {
        let parameters = ConnectionParameters(query: request.head.query ?? "")
        let name = parameters.namespace.flatMap { $0.isEmpty ? nil : $0 } ?? configuration.defaultNamespace
        let namespace: Namespace
        switch self.namespace(named: name) {
        case .success(let opened): namespace = opened
        case .failure(let problem): return .respond(problem.response)
        }
        let host = request.head.headers["Host"] ?? "localhost"
        return .webSocket { [self] webSocket in
            WireSession(webSocket: webSocket, namespace: namespace, gateway: self, host: host,
                        lastSessionID: parameters.lastSessionID)
        }
    }

    /// Opens the default namespace now, so the first client does not wait on an event loop while it loads.
    public func openDefaultNamespace() throws {
        if case .failure(let problem) = namespace(named: configuration.defaultNamespace) { throw problem }
    }

    /// The namespace called `name`, opened (and loaded from disk) on first use.
    func namespace(named name: String) -> Result<Namespace, NamespaceProblem> {
        guard DataDirectory.isValidNamespace(name) else { return .failure(.invalidName(name)) }
        return namespaces.withLock { open in
            if let namespace = open[name] { return .success(namespace) }
            guard open.count < configuration.maxNamespaces else { return .failure(.tooMany(configuration.maxNamespaces)) }
            var storeConfiguration = StoreConfiguration(layout: configuration.shardLayout, clock: configuration.clock)
            // Rules read the whole tree (`root`); it is kept even without rules, since an admin may put rules in
            // force at any time (`PUT /.settings/rules.json`, as the Firebase CLI does against an emulator).
            storeConfiguration.tracksWholeTree = true
            if let root = configuration.dataDirectory,
               let directory = DataDirectory.namespaceDirectory(root, namespace: name)
            {
                var persistence = PersistenceConfiguration(directory: directory)
                persistence.fsyncPolicy = configuration.fsyncPolicy
                storeConfiguration.persistence = persistence
            }
            do throws(JournalError) {
                let namespace = try Namespace(name: name, configuration: storeConfiguration)
                open[name] = namespace
                logger.info("opened namespace", metadata: ["namespace": "\(name)"])
                return .success(namespace)
            } catch {
                logger.error("cannot open namespace", metadata: ["namespace": "\(name)", "error": "\(error)"])
                return .failure(.storeFailed(name, error))
            }
        }
    }

    /// The names of the open namespaces, sorted.
    var openNamespaceNames: [String] {
        namespaces.withLock { $0.keys.sorted() }
    }

    /// Includes the HTTP server's transport figures (connections, bytes out, slow consumers) in `/.metrics`.
    public func reportTransportMetrics(of server: HTTPServer) {
        self.server.withLock { $0 = server }
    }

    /// The `.indexOn` declarations of the rules in force.
    var indexes: IndexDeclarations {
        IndexDeclarations(configuration.rules.rules?.indexes ?? [])
    }

    /// Re-checks every connection's listens against the rules now in force (after a reload).
    public func recheckAllListens() {
        for session in sessions.all { session.loop.execute { session.recheckListens() } }
        for stream in streams.all { stream.loop.execute { stream.recheck() } }
    }

    /// Closes every namespace's store (final snapshot, journals closed); call once the server has stopped.
    public func close() {
        let open = namespaces.withLock { open in
            defer { open.removeAll() }
            return Array(open.values)
        }
        for namespace in open {
            do {
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
        let coverage = configuration.rules.rules.map { RuleCoverageExposition($0.coverage).bytes } ?? []
        let body = metrics.exposition(
            sessions: sessions.count, listens: sessions.listenCount, views: views, namespaces: open.count,
            streams: streams.count,
            extra: (transport?.exposition ?? []) + coverage)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; version=0.0.4")
        return HTTPResponse(status: .ok, headers: headers, body: body)
    }
}

/// Why a connection's namespace is not available.
enum NamespaceProblem: Error, CustomStringConvertible {
    case invalidName(String)
    case tooMany(Int)
    case storeFailed(String, JournalError)

    var description: String {
        switch self {
        case .invalidName(let name): return "invalid namespace \"\(name.prefix(80))\": use 1-63 of a-z A-Z 0-9 - _"
        case .tooMany(let limit): return "too many namespaces open (limit \(limit))"
        case .storeFailed(let name, let error): return "namespace \(name) is unavailable: \(error)"
        }
    }

    var response: HTTPResponse {
        switch self {
        case .invalidName: return .error(.badRequest, message: description)
        case .tooMany, .storeFailed: return .error(.serviceUnavailable, message: description)
        }
    }
}
