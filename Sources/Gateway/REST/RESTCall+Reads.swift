import Auth
import CoreMetrics
import DataModel
import Dispatch
import HTTP1
import HTTPServer
import Store

/// REST reads: `GET` of a location, shallow or filtered (rest-api.md §3, §4, §7), and event streams (§9).
extension RESTCall {
    func readRoute(_ shape: RESTReadShape) throws(RESTError) -> Route {
        let query = try checkedQuery(shape)
        if let callback = request.parameters["callback"], !RESTReply.isValidCallback(callback) {
            throw .badRequest("Invalid callback: use a JavaScript function name")
        }
        let ifNoneMatch = request.head.headers["if-none-match"]
        // With none of this connection's requests unanswered, a plain read needs no place in the order: the
        // store's current state, when nothing was sequenced since it was taken, holds every acknowledged write.
        // Otherwise (and while the namespace loads) it is read in order, which publishes the state for the reads
        // after it. In cluster mode there is no current state: every read waits for the log's head.
        if unansweredAhead == nil, query == nil, let current = namespace.store.current {
            return .respond(try answer(current, shape: shape, ifNoneMatch: ifNoneMatch))
        }
        let read: @Sendable (StoreSnapshot, PendingResponse) -> Void = { [self] snapshot, pending in
            guard let query else {
                pending.respond(respondOrFail { () throws(RESTError) in
                    try answer(snapshot, shape: shape, ifNoneMatch: ifNoneMatch)
                })
                return
            }
            guard snapshot.isAvailable else { return pending.respond(reply.failure(.namespaceUnavailable)) }
            guard gate.mayRead(path, query: query, in: snapshot) else {
                return pending.respond(reply.failure(.permissionDenied))
            }
            gateway.metrics.reads.increment()
            let node = snapshot.root.descendant(at: path)
            // Filtering a large location is O(n log n): off the sequencer.
            DispatchQueue.global().async {
                pending.respond(answer(query.result(from: node), shape: shape, ifNoneMatch: ifNoneMatch))
            }
        }
        // Pipelined behind this connection's requests in the namespace: in order after them, which are after the
        // log's head.
        if unansweredAhead == order {
            return .ordered(order) { [self] pending in
                namespace.store.inOrder(publishing: query == nil) { snapshot in read(snapshot, pending) }
            }
        }
        return .deferred { [self] pending in
            namespace.store.inOrderAtLogHead(publishing: query == nil) { snapshot in read(snapshot, pending) }
        }
    }

    /// The answer to a whole or shallow read of `snapshot`, checked against its rules.
    private func answer(_ snapshot: StoreSnapshot, shape: RESTReadShape, ifNoneMatch: String?) throws(RESTError)
        -> HTTPResponse
    {
        guard snapshot.isAvailable else { throw .namespaceUnavailable }
        guard gate.mayRead(path, query: nil, in: snapshot) else { throw .permissionDenied }
        gateway.metrics.reads.increment()
        return answer(snapshot.root.descendant(at: path), shape: shape, ifNoneMatch: ifNoneMatch)
    }

    private func respondOrFail(_ body: () throws(RESTError) -> HTTPResponse) -> HTTPResponse {
        do throws(RESTError) {
            return try body()
        } catch {
            return reply.failure(error)
        }
    }

    /// An event stream: refused with 401 when the rules deny reading at the request's place in the order (the
    /// stream's listen is checked again at its own place, and ends with `cancel` if refused there).
    func streamRoute(_ shape: RESTReadShape) throws(RESTError) -> Route {
        if case .shallow = shape { throw .badRequest("shallow is not supported for streaming") }
        let query = try checkedQuery(shape)
        var headers = reply.commonHeaders(contentType: "text/event-stream; charset=utf-8")
        headers.add(name: "Transfer-Encoding", value: "chunked")
        let head = HTTPResponseHead(status: .ok, headers: headers)
        let acceptedUntil: Double?
        if case .user(let user) = identity { acceptedUntil = user.acceptedUntil } else { acceptedUntil = nil }
        return .deferred { [self] pending in
            namespace.store.inOrderAtLogHead { snapshot in
                guard snapshot.isAvailable else { return pending.respond(reply.failure(.namespaceUnavailable)) }
                guard gate.mayRead(path, query: query, in: snapshot) else {
                    return pending.respond(reply.failure(.permissionDenied))
                }
                pending.startStream(head: head) { stream in
                    let eventStream = EventStream(
                        stream: stream, gateway: gateway, namespace: namespace, path: path, query: query ?? .all,
                        identity: identity, caller: caller)
                    eventStream.start(acceptedUntil: acceptedUntil)
                }
            }
        }
    }

    /// The filtering query (`nil` for a whole or shallow read), refused when the rules require an index it lacks.
    private func checkedQuery(_ shape: RESTReadShape) throws(RESTError) -> QueryParams? {
        guard case .query(let query) = shape else { return nil }
        if gateway.configuration.restRequiresIndexes, gateway.configuration.rules.holder(for: namespace.name).rules != nil,
           !gateway.indexes(in: namespace.name).covers(query.index, at: path), let name = IndexDeclarations.declaredName(of: query.index)
        {
            throw .badRequest("Index not defined, add \".indexOn\": \"\(name)\", for path \"\(path)\", to the rules")
        }
        return query
    }

    private func answer(_ node: Node, shape: RESTReadShape, ifNoneMatch: String?) -> HTTPResponse {
        var headers: HTTPHeaders = [:]
        if case .full = shape, wantsETag || ifNoneMatch != nil {
            let etag = Self.etag(of: node)
            if let ifNoneMatch, ifNoneMatch == etag {
                return reply.plain(.notModified, [], headers: ["ETag": etag])
            }
            headers.add(name: "ETag", value: etag)
        }
        var writer = JSONWriter(capacity: 64)
        if request.addressesPriority {
            writer.writePriorityValue(node.priority)
        } else if case .shallow(let limit, let anchor) = shape {
            writeShallow(node, limit: limit, anchor: anchor, to: &writer)
        } else if request.parameters["format"] == "export" {
            writer.writeExport(node)
        } else {
            writer.writePlain(node)
        }
        return reply.read(writer.bytes, headers: headers, callback: request.parameters["callback"],
                          download: request.parameters["download"])
    }

    /// Keys only (data-model.md §10): each child as `true`; a leaf as itself.
    private func writeShallow(_ node: Node, limit: Int?, anchor: QueryParams.LimitAnchor, to writer: inout JSONWriter) {
        guard node.hasChildren else {
            writer.writePlain(node)
            return
        }
        let count = node.childCount
        let taken = min(limit ?? count, count)
        let first = anchor == .last ? count - taken : 0
        writer.writeRaw("{".utf8)
        for (offset, entry) in node.children(fromRank: first).prefix(taken).enumerated() {
            if offset > 0 { writer.writeRaw(",".utf8) }
            writer.writeString(entry.key.string)
            writer.writeRaw(":true".utf8)
        }
        writer.writeRaw("}".utf8)
    }
}
