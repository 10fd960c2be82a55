import Authorization
import DataModel
import HTTP1
import HTTPServer
import Rules
import Store

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
extension Gateway {
    func simulateRoute(_ request: HTTPRequest, reply: RESTReply, parameters: QueryString) -> Route {
        let namespace: Namespace
        switch restNamespace(request, parameters: parameters, identity: .admin, reply: reply) {
        case .success(let opened): namespace = opened
        case .failure(let refusal): return .respond(refusal.response)
        }
        let body = request.body
        return .deferred { pending in
            namespace.store.inOrder { snapshot in
                guard snapshot.isAvailable else { return pending.respond(reply.failure(.namespaceUnavailable)) }
                // A copy of the revision in force, so that simulations do not count in its coverage.
                let inForce = snapshot.rules.source.flatMap { try? RuleSet(source: $0, fileName: "rules") }
                pending.respond(Self.simulate(body, data: snapshot.root, inForce: inForce, reply: reply))
            }
        }
    }

    private static func simulate(_ body: [UInt8], data: Node, inForce: RuleSet?, reply: RESTReply) -> HTTPResponse {
        let suite: RulesTestSuite
        do {
            suite = try RulesTestSuite.parse(body, expectationsRequired: false, defaultData: data)
        } catch {
            return reply.failure(.badRequest(error.description))
        }
        var rules = inForce
        if let source = suite.rulesSource {
            do {
                rules = try RuleSet(source: source, fileName: "rules")
            } catch {
                return reply.plain(.badRequest, diagnosticsJSON(error))
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
                write(evaluation, into: &writer)
            }
            writer.writeRaw(#"],"error":"#.utf8)
            if let error = result.setupError { writer.writeString(error) } else { writer.writeRaw("null".utf8) }
            writer.writeRaw("}".utf8)
        }
        writer.writeRaw("]}".utf8)
        return reply.success(writer.bytes)
    }

    static func write(_ evaluation: RuleEvaluation, into writer: inout JSONWriter) {
        writer.writeRaw(#"{"kind":"#.utf8)
        writer.writeString(evaluation.kind.rawValue)
        writer.writeRaw(#","rule":"#.utf8)
        writer.writeString(evaluation.rulePath)
        if let position = evaluation.position {
            writer.writeRaw(#","line":"#.utf8)
            writer.writeNumber(Double(position.line))
            writer.writeRaw(#","column":"#.utf8)
            writer.writeNumber(Double(position.column))
        }
        writer.writeRaw(#","location":"#.utf8)
        writer.writeString(evaluation.location.description)
        writer.writeRaw(#","expression":"#.utf8)
        writer.writeString(evaluation.source)
        writer.writeRaw(#","outcome":"#.utf8)
        writer.writeString(evaluation.outcome.description)
        writer.writeRaw("}".utf8)
    }

    /// `{"error": text, "diagnostics": [{"line", "column", "rule", "message"}]}` for rules that do not load, so an
    /// editor can mark each error at its line and column.
    static func diagnosticsJSON(_ error: RulesLoadError) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.writeRaw(#"{"error":"#.utf8)
        writer.writeString(error.description)
        writer.writeRaw(#","diagnostics":["#.utf8)
        for (index, diagnostic) in error.errors.enumerated() {
            if index > 0 { writer.writeRaw(",".utf8) }
            writer.writeRaw("{".utf8)
            if let position = diagnostic.position {
                writer.writeRaw(#""line":"#.utf8)
                writer.writeNumber(Double(position.line))
                writer.writeRaw(#","column":"#.utf8)
                writer.writeNumber(Double(position.column))
                writer.writeRaw(",".utf8)
            }
            writer.writeRaw(#""rule":"#.utf8)
            writer.writeString(diagnostic.rulePath)
            writer.writeRaw(#","message":"#.utf8)
            writer.writeString(diagnostic.message)
            writer.writeRaw("}".utf8)
        }
        writer.writeRaw("]}".utf8)
        return writer.bytes
    }
}
