import Auth
import CoreMetrics
import DataModel
import HTTP1
import HTTPServer
import Logging
import Store

/// The Firebase REST API (rest-api.md): `/<path>.json` with `GET`, `PUT`, `POST`, `PATCH`, `DELETE`, event streams,
/// and CORS preflights. Everything before the store is decided on the connection's loop; store work answers
/// through a ``PendingResponse``.
extension Gateway {
    /// The namespace a REST request names (`ns`, the host's first label, or the default), opened; or the answer
    /// refusing it.
    func restNamespace(_ request: HTTPRequest, parameters: QueryString, identity: ConnectionIdentity, reply: RESTReply)
        -> Result<Namespace, RESTRefusal>
    {
        let name = RESTRequest.namespaceName(
            parameters: parameters, host: request.head.headers["Host"], defaultName: configuration.defaultNamespace)
        return namespace(named: name, mayCreate: identity.holdsAdminCredential).mapError { problem in
            if case .notCreated = problem { metrics.namespacesRefused.increment() }
            return RESTRefusal(
                response: reply.failure(RESTError(status: problem.response.status, message: problem.description)))
        }
    }

    /// Whether a WebSocket upgrade carries the admin credential (`Authorization: Bearer`, as the Node SDKs send
    /// it, or `auth=` in the URL) from a page of no other site: such a connection may create its namespace.
    func upgradeCarriesAdminCredential(_ head: HTTPRequestHead) -> Bool {
        guard !CrossSiteRequest.isCrossSite(head),
              let credential = RESTRequest.credential(head, parameters: QueryString(head.query))
        else { return false }
        if case .admin = tokenVerifier.verify(credential, now: configuration.clock() / 1000) { return true }
        return false
    }

    /// Routes a REST request. A credential or App Check token naming a signing key not fetched yet makes the answer
    /// wait (deferred) until the keys were fetched again; the request is then routed anew with `keysAwaited`.
    func restRoute(_ request: HTTPRequest, context: RequestContext, keysAwaited: Bool = false) -> Route {
        let parameters = QueryString(request.head.query)
        let reply = RESTReply(parameters: parameters, origin: request.head.headers["Origin"],
                              corsOrigins: configuration.corsOrigins)
        if RESTRequest.effectiveMethod(request.head, parameters: parameters) == "OPTIONS" {
            return .respond(reply.preflight(requestedHeaders: request.head.headers["Access-Control-Request-Headers"]))
        }
        do {
            guard let rest = try RESTRequest(request, parameters: parameters) else {
                return .respond(reply.failure(.notREST))
            }
            if !keysAwaited, let waiting = awaitingSigningKeys(request, parameters: parameters, context: context) {
                return waiting
            }
            let identity = try RESTRequest.identity(
                request.head, parameters: parameters, verifier: tokenVerifier, now: configuration.clock() / 1000,
                refused: { [logger] reason in
                    logger.info("auth.rejected", metadata: ["reason": "\(reason)", "caller": "REST"])
                }
            ).get()
            try checkAppCheck(request.head, parameters: parameters, identity: identity)
            let namespace: Namespace
            switch restNamespace(request, parameters: parameters, identity: identity, reply: reply) {
            case .success(let opened): namespace = opened
            case .failure(let refusal): return .respond(refusal.response)
            }
            let call = RESTCall(gateway: self, namespace: namespace, request: rest, identity: identity, reply: reply,
                                caller: "REST \(context.remoteAddress)", unansweredAhead: context.unansweredAhead)
            metrics.restRequests.increment()
            return try call.route()
        } catch {
            return .respond(reply.failure(error))
        }
    }
}

/// One REST request with everything needed to serve it.
struct RESTCall: Sendable {
    let gateway: Gateway
    let namespace: Namespace
    let request: RESTRequest
    let identity: ConnectionIdentity
    let reply: RESTReply
    let caller: String
    /// The order of this connection's earlier requests still owed answers (``RequestContext/unansweredAhead``).
    let unansweredAhead: PipelineOrder?

    /// The namespace's order: requests pipelined on one connection take effect in it in the order sent.
    var order: PipelineOrder { PipelineOrder(namespace.name) }

    var gate: RulesGate {
        RulesGate(identity: identity, caller: caller)
    }

    var path: Path { request.path }

    func route() throws(RESTError) -> Route {
        switch request.method {
        case .get:
            guard request.head.headers["if-match"] == nil else { throw .ifMatchUnsupported }
            let shape = try RESTReadShape(request.parameters)
            try checkTimeout()
            if request.head.headers["Accept"]?.contains("text/event-stream") == true { return try streamRoute(shape) }
            return try readRoute(shape)
        case .put, .delete:
            return try setRoute()
        case .post:
            guard request.head.headers["if-match"] == nil else { throw .ifMatchUnsupported }
            return try pushRoute()
        case .patch:
            guard request.head.headers["if-match"] == nil else { throw .ifMatchUnsupported }
            guard !wantsETag else { throw .badRequest("ETags are not supported for PATCH") }
            return try updateRoute()
        }
    }

    /// Whether the client asked for the `ETag` header (`X-Firebase-ETag: true`).
    var wantsETag: Bool {
        request.head.headers["X-Firebase-ETag"]?.lowercased() == "true"
    }

    /// The ETag of `node`: its wire hash, `null_etag` for an empty location (rest-api.md §7).
    static func etag(of node: Node) -> String {
        node.isEmpty ? "null_etag" : Store.hash(of: node)
    }

    /// `timeout=<n>ms|s|min`, positive and at most 15 minutes. Reads are served from memory, well within any
    /// valid limit, so only the syntax is enforced.
    private func checkTimeout() throws(RESTError) {
        guard let text = request.parameters["timeout"] else { return }
        let units: [(suffix: String, milliseconds: Double)] = [("ms", 1), ("min", 60_000), ("s", 1000)]
        for unit in units where text.hasSuffix(unit.suffix) {
            guard let amount = Double(text.dropLast(unit.suffix.count)), amount.isFinite, amount > 0,
                  amount * unit.milliseconds <= 15 * 60_000
            else { break }
            return
        }
        throw .badRequest("Invalid timeout: \(text.prefix(40))")
    }
}

/// A REST request refused before it reached a namespace, with its answer.
struct RESTRefusal: Error {
    let response: HTTPResponse
}
