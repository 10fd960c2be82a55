import CoreMetrics
import DataModel
import HTTP1
import HTTPServer
import Store

/// REST writes (rest-api.md §2, §7, §8): `PUT` and `DELETE` (with `if-match` compare-and-set), `POST` with a new
/// push id, `PATCH` as one atomic multi-path update. Rules run inside the store, against the tree as it is at the
/// write's place in the namespace's order; the answer is sent once the write is durable.
extension RESTCall {
    func setRoute() throws(RESTError) -> Route {
        let value: WriteValue
        if request.method == .delete {
            value = WriteValue(node: .empty)
        } else {
            try checkWriteSize()
            value = try parseData(request.body)
        }
        let target: WriteTarget = request.addressesPriority ? .priority(of: path) : .node(path)
        // `null_etag` is the ETag of an empty location; the store's compare-and-set spells it as an empty hash.
        let expected = request.head.headers["if-match"].map { $0 == "null_etag" ? "" : $0 }
        let write = StoreWrite.set(target, value, expectedHash: expected)
        return submit(write) { [self] outcome in
            let node = outcome.changes.first?.newValue ?? .empty
            var writer = JSONWriter(capacity: 64)
            if request.addressesPriority {
                writer.writePriorityValue(node.priority)
            } else {
                writer.writePlain(node)
            }
            // A conditional write answers with the new ETag too: set_if_unchanged hands it back to the caller.
            return (writer.bytes, wantsETag || expected != nil ? Self.etag(of: node) : nil)
        }
    }

    func pushRoute() throws(RESTError) -> Route {
        guard !request.addressesPriority else { throw .invalidPath }
        try checkWriteSize()
        let value = try parseData(request.body, depth: path.depth + 1)
        return submit(.push(path, value)) { [self] outcome in
            // The store names the child from the write's log entry (time-ordered, the same on replay).
            let key = outcome.changes.first?.path.lastKey?.string ?? ""
            var writer = JSONWriter(capacity: 40)
            writer.writeRaw(#"{"name":"#.utf8)
            writer.writeString(key)
            writer.writeRaw("}".utf8)
            return (writer.bytes, wantsETag ? Self.etag(of: outcome.changes.first?.newValue ?? .empty) : nil)
        }
    }

    func updateRoute() throws(RESTError) -> Route {
        guard !request.addressesPriority else { throw .invalidPath }
        try checkWriteSize()
        let entries: [UpdateEntry]
        do {
            entries = try JSONReader.readUpdate(request.body, depth: path.depth)
        } catch {
            throw Self.dataError(error, body: request.body, object: true)
        }
        guard !entries.isEmpty else { return .respond(reply.success(Array("{}".utf8))) }
        return submit(.update(path, entries)) { outcome in
            (Self.updateAnswer(entries, changes: outcome.changes), nil)
        }
    }

    /// Submits `write` and answers from its outcome (`answer` gives the body and ETag), or with the failure.
    private func submit(
        _ write: StoreWrite, answer: @escaping @Sendable (WriteOutcome) -> (body: [UInt8], etag: String?)
    ) -> Route {
        let caller = gate.writeCaller
        // The write takes its place in the namespace's order when routed: requests pipelined behind it follow.
        return .ordered(order) { [self] pending in
            namespace.store.write(write, by: caller) { result in
                switch result {
                case .success(let outcome):
                    gateway.metrics.countWrite()
                    let (body, etag) = answer(outcome)
                    pending.respond(reply.success(body, headers: etag.map { ["ETag": $0] } ?? [:]))
                case .failure(let error):
                    gateway.metrics.rejectedWrites.increment()
                    pending.respond(failure(error))
                }
            }
        }
    }

    private func failure(_ error: StoreError) -> HTTPResponse {
        switch error {
        case .stale(let current):
            // 412: the current value and its ETag, so the client can retry (rest-api.md §7).
            var writer = JSONWriter(capacity: 64)
            writer.writePlain(current)
            return reply.plain(.preconditionFailed, writer.bytes, headers: ["ETag": Self.etag(of: current)])
        case .denied:
            return reply.failure(.permissionDenied)
        case .invalidPriority, .serverValue, .tooLarge:
            return reply.failure(.badRequest("Invalid data; \(error)"))
        case .persistence, .unavailable:
            return reply.failure(RESTError(status: .serviceUnavailable, message: "Service unavailable: \(error)"))
        case .diskFull:
            return reply.failure(RESTError(status: .insufficientStorage, message: "Insufficient storage: \(error)"))
        }
    }

    /// The `writeSizeLimit` tier's largest body (rest-api.md §3; sizes stand in for Firebase's time estimates).
    private func checkWriteSize() throws(RESTError) {
        guard let tier = request.parameters["writeSizeLimit"] else { return }
        let limits = ["tiny": 10_000, "small": 1_000_000, "medium": 10_000_000, "large": 64_000_000,
                      "unlimited": 256 * 1024 * 1024]
        guard let limit = limits[tier] else { throw .badRequest("Invalid writeSizeLimit: \(tier.prefix(40))") }
        guard request.body.count <= limit else { throw .writeTooBig }
    }

    private func parseData(_ body: [UInt8], depth: Int? = nil) throws(RESTError) -> WriteValue {
        do {
            return try JSONReader.readData(body, depth: depth ?? path.depth)
        } catch {
            throw Self.dataError(error, body: body, object: false)
        }
    }

    /// Firebase's texts for a body that does not parse or is not valid data (rest-api.md §5).
    static func dataError(_ error: JSONError, body: [UInt8], object: Bool) -> RESTError {
        guard case .invalidData(let problem) = error.reason else {
            return object ? .unparsableObject : .unparsableValue
        }
        if case .invalidKey = problem {
            let (line, column) = position(of: error.offset, in: body)
            return .badRequest("""
                Invalid data; couldn't parse key beginning at \(line):\(column). \
                Key value can't be empty or contain $ # [ ] / or .
                """)
        }
        return .badRequest("Invalid data; \(problem)")
    }

    /// 1-based line and column of byte `offset`.
    private static func position(of offset: Int, in body: [UInt8]) -> (Int, Int) {
        let prefix = body.prefix(max(0, offset))
        let line = prefix.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
        let lineStart = prefix.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
        return (line, prefix.count - lineStart + 1)
    }

    /// The `PATCH` answer: each member as written, server values resolved.
    private static func updateAnswer(_ entries: [UpdateEntry], changes: [Change]) -> [UInt8] {
        var writer = JSONWriter(capacity: 64)
        writer.writeRaw("{".utf8)
        for (index, entry) in entries.enumerated() {
            if index > 0 { writer.writeRaw(",".utf8) }
            let value = index < changes.count && changes.count == entries.count ? changes[index].newValue : entry.value.node
            switch entry.target {
            case .node(let relative):
                writer.writeString(relative.keys.map(\.string).joined(separator: "/"))
                writer.writeRaw(":".utf8)
                writer.writePlain(value)
            case .priority(of: let relative):
                writer.writeString((relative.keys.map(\.string) + [".priority"]).joined(separator: "/"))
                writer.writeRaw(":".utf8)
                writer.writePriorityValue(value.priority)
            }
        }
        writer.writeRaw("}".utf8)
        return writer.bytes
    }
}
