import Authorization
import DataModel
import Gateway
import HTTP1
import HTTPServer
import Rules

/// `POST /.settings/simulate.json` (admin): the rules' decision on reads and writes that are never made, with the
/// trace of every rule tried — the console's rules simulator.
///
/// The body is a rules cases file (``RulesTestSuite``): `cases` with `operation` (`read`, `set`, `update`), `path`
/// (ending in `/.priority` to set a priority), `value`, `query`, `auth` and `now`, where `expected` is optional.
/// `rules` may be the rules object or its text (then lines and columns are those of the text); without it the
/// revision in force in the namespace's log judges (a copy: simulations do not count in its coverage). Without
/// `data`, the namespace's data as it is now (its place in the namespace's order) is used. Each case runs through
/// the server's own authorization path (``RulesPolicy/run(_:explain:)``: the log's preview of the write, the same
/// policy). Nothing is written. The answer: `{"results": [{"name", "allowed", "trace": [{"kind", "rule", "line",
/// "column", "location", "expression", "outcome"}], "error"}]}`; rules that do not load give 400 with their
/// `diagnostics`.
extension ControlPlane {
    func simulateRoute(_ body: [UInt8], admin: AdminRequest) -> Route {
        gateway.namespaceStateRoute(for: admin) { state in
            // A copy of the revision in force, so that simulations do not count in its coverage.
            let inForce = state.rulesSource.flatMap { try? RuleSet(source: $0, fileName: "rules") }
            return Self.simulate(body, data: state.root, inForce: inForce, admin: admin)
        }
    }

    private static func simulate(_ body: [UInt8], data: Node, inForce: RuleSet?, admin: AdminRequest) -> HTTPResponse {
        let suite: RulesTestSuite
        do {
            suite = try RulesTestSuite.parse(body, expectationsRequired: false, defaultData: data)
        } catch {
            return admin.failure(.badRequest, message: error.description)
        }
        var rules = inForce
        if let source = suite.rulesSource {
            do {
                rules = try RuleSet(source: source, fileName: "rules")
            } catch {
                return admin.plain(.badRequest, RulesDiagnostics.json(error))
            }
        }
        var writer = JSONWriter(capacity: 256)
        writer.writeRaw(#"{"results":["#.utf8)
        for (index, testCase) in suite.cases.enumerated() {
            if index > 0 { writer.writeRaw(",".utf8) }
            writer.writeRaw(#"{"name":"#.utf8)
            writer.writeString(testCase.name)
            guard let rules else {
                writer.writeRaw(#","allowed":true,"trace":[],"error":null}"#.utf8)
                continue
            }
            let result = RulesPolicy(rules: rules).run(testCase, explain: true)
            writer.writeRaw(#","allowed":"#.utf8)
            writer.writeRaw((result.setupError == nil && result.decision.allowed ? "true" : "false").utf8)
            writer.writeRaw(#","trace":["#.utf8)
            for (step, evaluation) in result.decision.trace.enumerated() {
                if step > 0 { writer.writeRaw(",".utf8) }
                evaluation.write(into: &writer)
            }
            writer.writeRaw(#"],"error":"#.utf8)
            if let error = result.setupError { writer.writeString(error) } else { writer.writeRaw("null".utf8) }
            writer.writeRaw("}".utf8)
        }
        writer.writeRaw("]}".utf8)
        return admin.success(writer.bytes)
    }
}
