import DataModel

extension ClientMessage {
    /// The message as the JS SDK would send it (for protocol test clients and load testers): members in the JS
    /// SDK's order, paths with a leading slash, queries as their original object (or the normalized one), data in
    /// export format with server values as `{".sv":…}`, legacy aliases under their current names.
    public func encoded() -> [UInt8] {
        var writer = JSONWriter(capacity: 128)
        switch self {
        case .control(let control):
            writer.openEnvelope(layer: WireKey.controlLayer)
            writer.writeASCII("{")
            writer.writeKey(WireKey.controlType, first: true)
            switch control {
            case .ping: writer.writeString(WireKey.ping)
            case .switchAck: writer.writeString(WireKey.switchAck)
            case .endOfTransmission: writer.writeString(WireKey.endOfTransmission)
            }
            writer.writeKey(WireKey.controlPayload)
            writer.writeASCII("{}}")
        case .request(let request):
            writer.openEnvelope(layer: WireKey.dataLayer)
            writer.writeASCII("{")
            writer.writeKey(WireKey.requestNumber, first: true)
            writer.writeInteger(request.number)
            writer.writeKey(WireKey.action)
            writer.writeString(request.action.name)
            writer.writeKey(WireKey.body)
            writer.writeASCII("{")
            writer.writeBody(of: request.action)
            writer.writeASCII("}}")
        }
        writer.closeObject()
        return writer.bytes
    }
}

extension JSONWriter {
    /// Writes the members of a request body (without braces).
    fileprivate mutating func writeBody(of action: ClientAction) {
        switch action {
        case .stats(let counters):
            writeKey(WireKey.counters, first: true)
            write(counters)
        case .auth(let request):
            writeKey(WireKey.credential, first: true)
            writeString(request.credential)
            if request.noAuth {
                writeKey(WireKey.noAuth)
                writeASCII("true")
            }
            if let variable = request.authVariable {
                writeKey(WireKey.authVariable)
                write(variable)
            }
        case .unauth, .unappCheck:
            break
        case .appCheck(let token):
            writeKey(WireKey.appCheckToken, first: true)
            writeString(token)
        case .listen(let request):
            writePathMember(request.path)
            writeQueryAndTag(request.query, object: request.queryObject, tag: request.tag)
            if let hash = request.hash {
                writeKey(WireKey.hash)
                writeString(hash)
            }
            if let compoundHash = request.compoundHash {
                writeKey(WireKey.compoundHash)
                write(
                    JSONValue.object([
                        (WireKey.compoundHashHashes, .array(compoundHash.hashes.map { .string($0) })),
                        (WireKey.compoundHashPaths, .array(compoundHash.paths.map { .string($0.description) })),
                    ]))
            }
        case .unlisten(let request):
            writePathMember(request.path)
            writeQueryAndTag(request.query, object: request.queryObject, tag: request.tag)
        case .put(let request), .onDisconnectPut(let request):
            writeKey(WireKey.path, first: true)
            switch request.target {
            case .node(let path): writePath(path)
            case .priority(of: let path):
                writeString((path.isRoot ? "" : path.description) + "/" + WriteTarget.prioritySegment)
            }
            writeKey(WireKey.data)
            writeClientData(request.value)
            if let hash = request.hash {
                writeKey(WireKey.hash)
                writeString(hash)
            }
        case .merge(let request), .onDisconnectMerge(let request):
            writePathMember(request.path)
            writeKey(WireKey.data)
            writeASCII("{")
            for (index, entry) in request.entries.enumerated() {
                if index > 0 { writeASCII(",") }
                writeRelativeTarget(entry.target)
                writeASCII(":")
                writeClientData(entry.value)
            }
            closeObject()
        case .onDisconnectCancel(let path):
            writePathMember(path)
            writeKey(WireKey.data)
            writeASCII("null")
        case .get(let request):
            writePathMember(request.path)
            writeKey(WireKey.query)
            write(request.queryObject ?? request.query.wireObject)
        }
    }

    private mutating func writePathMember(_ path: Path) {
        writeKey(WireKey.path, first: true)
        writePath(path)
    }

    /// Writes `,"q":…,"t":…` for tagged requests (JS sends neither for default listens), and `q` alone when the
    /// request came with one.
    private mutating func writeQueryAndTag(_ query: QueryParams, object: JSONValue?, tag: Int?) {
        guard tag != nil || object != nil else { return }
        writeKey(WireKey.query)
        write(object ?? query.wireObject)
        if let tag {
            writeKey(WireKey.tag)
            writeInteger(tag)
        }
    }
}
