import HTTP1
import HTTPServer
import Logging
import Rules
import Store
import Synchronization
import Transport

/// What the control plane (admin endpoints, console; the `ControlPlane` module) may ask of the data plane: who is
/// the admin, read-only views of the namespaces, connections and figures, the feed of rule evaluations
/// (``evaluations``), and putting uploaded rules in force. The data plane knows nothing of the control plane's
/// routes: the executable puts the control plane's router in front of the gateway.
extension Gateway {
    /// Decides whether `request` to an admin endpoint may be served: only with the admin credential (401
    /// `Permission denied` otherwise), never from another site's web page (403). A CORS preflight is answered too.
    public func admitAdmin(_ request: HTTPRequest) -> AdminAdmission {
        let parameters = QueryString(request.head.query)
        let reply = RESTReply(parameters: parameters)
        let method = RESTRequest.effectiveMethod(request.head, parameters: parameters)
        if method == "OPTIONS" {
            return .answered(reply.preflight(requestedHeaders: request.head.headers["Access-Control-Request-Headers"]))
        }
        switch RESTRequest.identity(request.head, parameters: parameters, verifier: tokenVerifier,
                                    now: configuration.clock() / 1000) {
        case .failure(let error): return .answered(reply.failure(error))
        case .success(.admin), .success(.override): break
        case .success: return .answered(reply.failure(.permissionDenied))
        }
        let namespace = RESTRequest.namespaceName(
            parameters: parameters, host: request.head.headers["Host"], defaultName: configuration.defaultNamespace)
        return .admitted(AdminRequest(method: method, namespace: namespace, reply: reply))
    }

    /// Answers `admin` with `answer` of the state of the namespace it names at its current place in the namespace's
    /// order (opened, or created: the admin may). A namespace refused or unavailable is answered as REST does.
    public func namespaceStateRoute(for admin: AdminRequest,
                                    answer: @escaping @Sendable (NamespaceState) -> HTTPResponse) -> Route
    {
        let namespace: Namespace
        switch self.namespace(named: admin.namespace, mayCreate: true) {
        case .success(let opened): namespace = opened
        case .failure(let problem): return .respond(admin.failure(problem.response.status, message: problem.description))
        }
        return .deferred { pending in
            namespace.store.inOrder { snapshot in
                guard snapshot.isAvailable else { return pending.respond(admin.reply.failure(.namespaceUnavailable)) }
                pending.respond(answer(NamespaceState(root: snapshot.root, rulesSource: snapshot.rules.source)))
            }
        }
    }

    /// Describes up to `limit` live wire connections, each on its own event loop (its listens belong to it), and
    /// calls `done` once all have been, with them and the number of live connections (on one of those loops, or
    /// at once when there are none).
    public func describeConnections(limit: Int,
                                    _ done: @escaping @Sendable (_ listed: [ConnectionSummary], _ total: Int) -> Void)
    {
        let all = sessions.all
        let listed = Array(all.prefix(limit))
        guard !listed.isEmpty else { return done([], all.count) }
        let described = Mutex<[ConnectionSummary]>([])
        for session in listed {
            session.loop.execute {
                let summary = ConnectionSummary(session)
                let complete = described.withLock { entries -> [ConnectionSummary]? in
                    entries.append(summary)
                    return entries.count == listed.count ? entries : nil
                }
                if let complete { done(complete, all.count) }
            }
        }
    }

    /// The data plane's figures now.
    public var figures: GatewayFigures {
        let transport = transportFigures
        return GatewayFigures(
            connections: transport?.liveConnections ?? sessions.count, listens: sessions.listenCount, views: viewCount,
            writes: metrics.writeCount.load, deliveries: metrics.deliveryCount.load,
            bytesWritten: transport?.bytesWritten ?? 0, slowConsumersDropped: transport?.slowConsumers ?? 0)
    }

    /// Puts `source` in force as the rules of namespace `name` (an admin upload) and re-checks the namespace's
    /// listens and streams against them.
    public func replaceRules(of name: String, with source: [UInt8]) throws(RulesUploadError) {
        guard DataDirectory.isValidNamespace(name) else {
            throw .invalidNamespace(NamespaceProblem.invalidName(name).description)
        }
        do {
            let rules = try configuration.rules.replace(name, with: source, fileName: "/.settings/rules.json")
            logger.notice("security rules replaced by an admin upload (\(rules.coverage.count) rule expressions)",
                          metadata: ["namespace": "\(name)"])
        } catch {
            throw .invalidRules(error)
        }
        rulesChanged(in: [name])
    }
}
