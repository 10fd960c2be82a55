import DataModel
import HTTP1
import HTTPServer
import Logging
import Rules
import Store

/// The admin endpoints tooling uses (rest-api.md §8.1, §8.2): the rules in force, the open namespaces, and live
/// rule coverage. Only the admin credential may use them (401 `Permission denied` otherwise), never from another
/// site's web page (403), and their answers grant no other origin (no CORS headers).
extension Gateway {
    /// The admin paths.
    static let adminPaths: Set<String> = [
        "/.settings/rules.json", "/.settings/simulate.json", "/.inspect/databases.json", "/.inspect/coverage.json",
        "/.inspect/figures.json", "/.inspect/connections.json", "/.inspect/evaluations",
    ]

    func adminRoute(_ request: HTTPRequest) -> Route {
        let parameters = QueryString(request.head.query)
        let reply = RESTReply(parameters: parameters)
        let method = RESTRequest.effectiveMethod(request.head, parameters: parameters)
        if method == "OPTIONS" {
            return .respond(reply.preflight(requestedHeaders: request.head.headers["Access-Control-Request-Headers"]))
        }
        switch RESTRequest.identity(request.head, parameters: parameters, verifier: tokenVerifier,
                                    now: configuration.clock() / 1000) {
        case .failure(let error): return .respond(reply.failure(error))
        case .success(.admin), .success(.override): break
        case .success: return .respond(reply.failure(.permissionDenied))
        }
        // The namespace `ns=` (or the Host) names; the default one without either.
        let namespace = RESTRequest.namespaceName(
            parameters: parameters, host: request.head.headers["Host"], defaultName: configuration.defaultNamespace)
        switch (request.head.path, method) {
        case ("/.settings/rules.json", "GET"):
            let source = configuration.rules.holder(for: namespace).source
                ?? Array(#"{"rules":{".read":true,".write":true}}"#.utf8)
            return .respond(reply.plain(.ok, source))
        case ("/.settings/rules.json", "PUT"):
            return .respond(replaceRules(request.body, namespace: namespace, reply: reply))
        case ("/.settings/simulate.json", "POST"):
            return simulateRoute(request, reply: reply, parameters: parameters)
        case ("/.inspect/databases.json", "GET"):
            return .respond(reply.success(databasesJSON()))
        case ("/.inspect/coverage.json", "GET"):
            return .respond(reply.success(coverageJSON(namespace: namespace)))
        case ("/.inspect/figures.json", "GET"):
            return .respond(reply.success(figuresJSON()))
        case ("/.inspect/connections.json", "GET"):
            return connectionsRoute(reply: reply)
        case ("/.inspect/evaluations", "GET"):
            return evaluationsRoute(reply: reply)
        default:
            return .respond(reply.failure(RESTError(status: .methodNotAllowed, message: "Method not allowed: \(method.prefix(32))")))
        }
    }

    /// Puts uploaded rules in force in `namespace` and re-checks its listens and streams against them.
    private func replaceRules(_ source: [UInt8], namespace: String, reply: RESTReply) -> HTTPResponse {
        guard DataDirectory.isValidNamespace(namespace) else {
            return reply.failure(RESTError(status: .badRequest, message: NamespaceProblem.invalidName(namespace).description))
        }
        do {
            let rules = try configuration.rules.replace(namespace, with: source, fileName: "/.settings/rules.json")
            logger.notice("security rules replaced by an admin upload (\(rules.coverage.count) rule expressions)",
                          metadata: ["namespace": "\(namespace)"])
            rulesChanged(in: [namespace])
            return reply.success(Array(#"{"status":"ok"}"#.utf8))
        } catch {
            return reply.plain(.badRequest, Self.diagnosticsJSON(error))
        }
    }

    private func databasesJSON() -> [UInt8] {
        var writer = JSONWriter(capacity: 64)
        writer.writeRaw("[".utf8)
        for (index, name) in openNamespaceNames.enumerated() {
            if index > 0 { writer.writeRaw(",".utf8) }
            writer.writeRaw(#"{"name":"#.utf8)
            writer.writeString(name)
            writer.writeRaw("}".utf8)
        }
        writer.writeRaw("]".utf8)
        return writer.bytes
    }

    /// Per rule expression: where it is, and how often it was true, false or an error since it was loaded.
    private func coverageJSON(namespace: String) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.writeRaw("[".utf8)
        for (index, rule) in (configuration.rules.holder(for: namespace).rules?.coverage ?? []).enumerated() {
            if index > 0 { writer.writeRaw(",".utf8) }
            writer.writeRaw(#"{"path":"#.utf8)
            writer.writeString(rule.rulePath)
            writer.writeRaw(#","kind":"#.utf8)
            writer.writeString(rule.kind.rawValue)
            writer.writeRaw(#","expression":"#.utf8)
            writer.writeString(rule.source)
            writer.writeRaw(#","line":"#.utf8)
            writer.writeNumber(Double(rule.position.line))
            writer.writeRaw(#","column":"#.utf8)
            writer.writeNumber(Double(rule.position.column))
            writer.writeRaw(#","true":"#.utf8)
            writer.writeNumber(Double(rule.trueCount))
            writer.writeRaw(#","false":"#.utf8)
            writer.writeNumber(Double(rule.falseCount))
            writer.writeRaw(#","error":"#.utf8)
            writer.writeNumber(Double(rule.errorCount))
            writer.writeRaw("}".utf8)
        }
        writer.writeRaw("]".utf8)
        return writer.bytes
    }
}
