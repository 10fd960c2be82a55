import DataModel
import Gateway
import HTTP1
import HTTPServer
import Transport

/// The console's views of the server (admin endpoints): the live connections with their listens, and the rule
/// evaluations as they happen. (The last minutes' figures are ``FiguresHistory``'s.)
extension ControlPlane {
    /// Unsent bytes at which a watcher of the evaluations that stopped reading is cut off.
    static let evaluationsCutOffBytes = 1 << 20

    /// `/.inspect/evaluations`: a server-sent event per rule evaluation (the gateway's ``Gateway/evaluations``),
    /// the recent ones first, for as long as the client reads.
    func evaluationsRoute(_ admin: AdminRequest) -> Route {
        var headers = admin.headers(contentType: "text/event-stream; charset=utf-8")
        headers.add(name: "Transfer-Encoding", value: "chunked")
        let feed = gateway.evaluations
        return .stream(head: HTTPResponseHead(status: .ok, headers: headers)) { stream in
            let loop = stream.loop
            stream.send(Array(": rule evaluations\n\n".utf8))
            let id = feed.watch { event in
                loop.execute {
                    guard !stream.isClosed else { return }
                    if stream.pendingOutboundBytes > Self.evaluationsCutOffBytes { return stream.cutOff() }
                    stream.send(event)
                }
            }
            stream.onClose = { feed.unwatch(id) }
        }
    }

    /// Most connections `/.inspect/connections.json` lists (it gives the total too).
    static let listedConnections = 1_000

    /// `{"total": N, "connections": [{"id", "namespace", "transport", "auth", "listens": [{"path", "query"}]}]}`,
    /// sent once the gateway described every listed connection.
    func connectionsRoute(_ admin: AdminRequest) -> Route {
        .deferred { [gateway] pending in
            gateway.describeConnections(limit: Self.listedConnections) { listed, total in
                var writer = JSONWriter(capacity: 256)
                writer.writeRaw(#"{"total":"#.utf8)
                writer.writeNumber(Double(total))
                writer.writeRaw(#","connections":["#.utf8)
                for (index, connection) in listed.enumerated() {
                    if index > 0 { writer.writeRaw(",".utf8) }
                    Self.write(connection, into: &writer)
                }
                writer.writeRaw("]}".utf8)
                pending.respond(admin.success(writer.bytes))
            }
        }
    }

    private static func write(_ connection: ConnectionSummary, into writer: inout JSONWriter) {
        writer.writeRaw(#"{"id":"#.utf8)
        writer.writeString(connection.id)
        writer.writeRaw(#","namespace":"#.utf8)
        writer.writeString(connection.namespace)
        writer.writeRaw(#","transport":"#.utf8)
        writer.writeString(connection.transport)
        writer.writeRaw(#","auth":"#.utf8)
        writer.write(connection.auth)
        writer.writeRaw(#","listens":["#.utf8)
        for (index, listen) in connection.listens.enumerated() {
            if index > 0 { writer.writeRaw(",".utf8) }
            writer.writeRaw(#"{"path":"#.utf8)
            writer.writeString(listen.path)
            writer.writeRaw(#","query":"#.utf8)
            writer.write(listen.query ?? .null)
            writer.writeRaw("}".utf8)
        }
        writer.writeRaw("]}".utf8)
    }
}
