import DataModel
import Wire

/// The server-sent events of a REST stream (rest-api.md §9): `event: NAME`, one compact `data:` line, a blank line.
enum ServerSentEvents {
    /// `put`: replace the data at `path` (relative to the stream's location) with `data`, as plain JSON.
    static func put(at path: Path, data: Node) -> [UInt8] {
        var writer = JSONWriter(capacity: 64)
        appendPut(at: path, data: data, to: &writer)
        return writer.bytes
    }

    /// The events for one push of a view at `location`: a `put` for a data push; for a merge, one `patch` when
    /// every changed location is a direct child of the merge's path, otherwise a `put` per changed location.
    /// Priority changes are left out (streams carry plain JSON).
    static func events(for content: PushContent, at location: Path) -> [UInt8] {
        var writer = JSONWriter(capacity: 96)
        switch content {
        case .data(let path, let node):
            appendPut(at: location.relativePath(to: path) ?? .root, data: node, to: &writer)
        case .merge(let path, let changes):
            let base = location.relativePath(to: path) ?? .root
            let children = changes.compactMap { change -> (Key, Node)? in
                guard case .node(let relative) = change.target, relative.depth == 1, let key = relative.firstKey
                else { return nil }
                return (key, change.node)
            }
            if children.count == changes.count {
                appendPatch(at: base, children: children, to: &writer)
            } else {
                for change in changes {
                    guard case .node(let relative) = change.target else { continue }
                    appendPut(at: base.appending(relative), data: change.node, to: &writer)
                }
            }
        }
        return writer.bytes
    }

    /// A heartbeat, sent after a quiet period; clients ignore it.
    static let keepAlive = Array("event: keep-alive\ndata: null\n\n".utf8)

    /// Read access was lost (rules changed); the stream ends after it.
    static let cancel = Array("event: cancel\ndata: \"Permission denied\"\n\n".utf8)

    /// The stream's credential expired; the stream ends after it. The payload is unquoted because the Python Admin
    /// SDK compares the raw line with this text to decide to reconnect with a fresh token.
    static let authRevoked = Array("event: auth_revoked\ndata: credential is no longer valid\n\n".utf8)

    private static func appendPut(at path: Path, data: Node, to writer: inout JSONWriter) {
        writer.writeRaw("event: put\ndata: {\"path\":".utf8)
        writer.writeString(path.description)
        writer.writeRaw(",\"data\":".utf8)
        writer.writePlain(data)
        writer.writeRaw("}\n\n".utf8)
    }

    private static func appendPatch(at path: Path, children: [(Key, Node)], to writer: inout JSONWriter) {
        writer.writeRaw("event: patch\ndata: {\"path\":".utf8)
        writer.writeString(path.description)
        writer.writeRaw(",\"data\":{".utf8)
        for (index, (key, node)) in children.enumerated() {
            if index > 0 { writer.writeRaw(",".utf8) }
            writer.writeString(key.string)
            writer.writeRaw(":".utf8)
            writer.writePlain(node)
        }
        writer.writeRaw("}}\n\n".utf8)
    }
}
