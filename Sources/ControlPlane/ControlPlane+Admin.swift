import DataModel
import Gateway
import HTTP1
import HTTPServer
import Rules

/// The admin endpoints tooling uses (rest-api.md §8): the rules in force, the open namespaces, live
/// rule coverage, the simulator and the console's views. Only the admin credential may use them (401 `Permission
/// denied` otherwise), never from another site's web page (403), and their answers grant no other origin (no CORS
/// headers): ``Gateway/admitAdmin(_:)`` decides.
extension ControlPlane {
    /// The admin paths.
    static let adminPaths: Set<String> = [
        "/.settings/rules.json", "/.settings/simulate.json", "/.inspect/databases.json", "/.inspect/coverage.json",
        "/.inspect/figures.json", "/.inspect/connections.json", "/.inspect/evaluations",
    ]

    func adminRoute(_ request: HTTPRequest) -> Route {
        let admin: AdminRequest
        switch gateway.admitAdmin(request) {
        case .answered(let response): return .respond(response)
        case .admitted(let admitted): admin = admitted
        }
        switch (request.head.path, admin.method) {
        case ("/.settings/rules.json", "GET"):
            let source = gateway.configuration.rules.holder(for: admin.namespace).source
                ?? Array(#"{"rules":{".read":true,".write":true}}"#.utf8)
            return .respond(admin.plain(.ok, source))
        case ("/.settings/rules.json", "PUT"):
            return .respond(replaceRules(request.body, admin: admin))
        case ("/.settings/simulate.json", "POST"):
            return simulateRoute(request.body, admin: admin)
        case ("/.inspect/databases.json", "GET"):
            return .respond(admin.success(databasesJSON()))
        case ("/.inspect/coverage.json", "GET"):
            return .respond(admin.success(coverageJSON(namespace: admin.namespace)))
        case ("/.inspect/figures.json", "GET"):
            return .respond(admin.success(figures.json()))
        case ("/.inspect/connections.json", "GET"):
            return connectionsRoute(admin)
        case ("/.inspect/evaluations", "GET"):
            return evaluationsRoute(admin)
        default:
            return .respond(admin.methodNotAllowed)
        }
    }

    /// Puts uploaded rules in force in the admin's namespace (the gateway re-checks its listens and streams).
    private func replaceRules(_ source: [UInt8], admin: AdminRequest) -> HTTPResponse {
        do throws(RulesUploadError) {
            try gateway.replaceRules(of: admin.namespace, with: source)
            return admin.success(Array(#"{"status":"ok"}"#.utf8))
        } catch {
            switch error {
            case .invalidNamespace(let message): return admin.failure(.badRequest, message: message)
            case .invalidRules(let problems): return admin.plain(.badRequest, RulesDiagnostics.json(problems))
            }
        }
    }

    private func databasesJSON() -> [UInt8] {
        var writer = JSONWriter(capacity: 64)
        writer.writeRaw("[".utf8)
        for (index, name) in gateway.openNamespaceNames.enumerated() {
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
        for (index, rule) in (gateway.configuration.rules.holder(for: namespace).rules?.coverage ?? []).enumerated() {
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
