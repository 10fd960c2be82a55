import Auth
import DataModel
import HTTP1
import HTTPServer
import Synchronization
import Transport
import Wire

/// The console's views of the server (admin endpoints): the last minutes' figures, the live connections with
/// their listens, and the rule evaluations as they happen.
extension Gateway {
    /// Unsent bytes at which a watcher of the evaluations that stopped reading is cut off.
    static let evaluationsCutOffBytes = 1 << 20

    /// `/.inspect/evaluations`: a server-sent event per rule evaluation (``EvaluationFeed``), the recent ones
    /// first, for as long as the client reads.
    func evaluationsRoute(reply: RESTReply) -> Route {
        var headers = reply.commonHeaders(contentType: "text/event-stream; charset=utf-8")
        headers.add(name: "Transfer-Encoding", value: "chunked")
        let feed = evaluations
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

    /// `{"intervalSeconds": 1, "samples": [{"time", "connections", "listens", "views", "writesPerSecond",
    /// "deliveriesPerSecond", "bytesOutPerSecond", "slowConsumersDropped"}]}`, oldest first.
    func figuresJSON() -> [UInt8] {
        var writer = JSONWriter(capacity: 4096)
        writer.writeRaw(#"{"intervalSeconds":1,"samples":["#.utf8)
        for (index, sample) in figures.samples.enumerated() {
            if index > 0 { writer.writeRaw(",".utf8) }
            let fields: [(String, Double)] = [
                ("time", sample.time), ("connections", Double(sample.connections)),
                ("listens", Double(sample.listens)), ("views", Double(sample.views)),
                ("writesPerSecond", Double(sample.writesPerSecond)),
                ("deliveriesPerSecond", Double(sample.deliveriesPerSecond)),
                ("bytesOutPerSecond", Double(sample.bytesOutPerSecond)),
                ("slowConsumersDropped", Double(sample.slowConsumersDropped)),
            ]
            writer.writeRaw("{".utf8)
            for (position, field) in fields.enumerated() {
                if position > 0 { writer.writeRaw(",".utf8) }
                writer.writeString(field.0)
                writer.writeRaw(":".utf8)
                writer.writeNumber(field.1)
            }
            writer.writeRaw("}".utf8)
        }
        writer.writeRaw("]}".utf8)
        return writer.bytes
    }

    /// `{"total": N, "connections": [{"id", "namespace", "transport", "auth", "listens": [{"path", "query"}]}]}`: each
    /// connection described on its own event loop (its listens belong to it), the answer sent once all have been.
    func connectionsRoute(reply: RESTReply) -> Route {
        let all = sessions.all
        let listed = Array(all.prefix(Self.listedConnections))
        return .deferred { pending in
            guard !listed.isEmpty else {
                return pending.respond(reply.success(Array(#"{"total":0,"connections":[]}"#.utf8)))
            }
            let described = Mutex<[[UInt8]]>([])
            for session in listed {
                session.loop.execute {
                    let entry = session.inspection()
                    let done = described.withLock { entries -> [[UInt8]]? in
                        entries.append(entry)
                        return entries.count == listed.count ? entries : nil
                    }
                    guard let done else { return }
                    var writer = JSONWriter(capacity: 256)
                    writer.writeRaw(#"{"total":"#.utf8)
                    writer.writeNumber(Double(all.count))
                    writer.writeRaw(#","connections":["#.utf8)
                    for (index, entry) in done.enumerated() {
                        if index > 0 { writer.writeRaw(",".utf8) }
                        writer.writeRaw(entry)
                    }
                    writer.writeRaw("]}".utf8)
                    pending.respond(reply.success(writer.bytes))
                }
            }
        }
    }
}

extension WireSession {
    /// This connection as `/.inspect/connections.json` lists it (on its loop).
    func inspection() -> [UInt8] {
        var writer = JSONWriter(capacity: 128)
        writer.writeRaw(#"{"id":"#.utf8)
        writer.writeString(sessionID)
        writer.writeRaw(#","namespace":"#.utf8)
        writer.writeString(namespace.name)
        writer.writeRaw(#","transport":"#.utf8)
        writer.writeString(channel.transport.rawValue)
        writer.writeRaw(#","auth":"#.utf8)
        switch identity {
        case .unauthenticated: writer.writeRaw("null".utf8)
        case .admin: writer.writeString("admin")
        case .user(let user): writer.write(user.ruleVariable)
        case .override(let variable): writer.write(variable ?? .null)
        }
        writer.writeRaw(#","listens":["#.utf8)
        let subscriptions = listens.values.sorted { $0.path.description < $1.path.description }
        for (index, subscription) in subscriptions.enumerated() {
            if index > 0 { writer.writeRaw(",".utf8) }
            writer.writeRaw(#"{"path":"#.utf8)
            writer.writeString(subscription.path.description)
            writer.writeRaw(#","query":"#.utf8)
            writer.write(subscription.queryObject ?? .null)
            writer.writeRaw("}".utf8)
        }
        writer.writeRaw("]}".utf8)
        return writer.bytes
    }
}
