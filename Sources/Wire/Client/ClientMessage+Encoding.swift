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
            writer.writeRequestHead()
            writer.writeInteger(request.number)
            writer.writeRequestTail(of: request.action)
            return writer.bytes
        }
        writer.closeObject()
        return writer.bytes
    }

    /// A request's message up to its number, `{"t":"d","d":{"r":`: with the number's decimal digits and
    /// ``requestTail(for:)`` after it, byte for byte what ``encoded()`` writes for the request (a client encodes a
    /// request where it is made, and numbers it when it sends it).
    public static let requestHead: [UInt8] = {
        var writer = JSONWriter(capacity: 16)
        writer.writeRequestHead()
        return writer.bytes
    }()

    /// What follows a request's number in its message: its action, its body and the envelope's end.
    public static func requestTail(for action: ClientAction) -> [UInt8] {
        var writer = JSONWriter(capacity: 128)
        writer.writeRequestTail(of: action)
        return writer.bytes
    }

    /// ``requestTail(for:)`` of a put of `data` at `path`, where `data` is already JSON text (as a client's value
    /// conversion wrote and checked it): copied, not encoded again from the data model. The same bytes when `data`
    /// is the value in export format.
    public static func putRequestTail(at path: Path, data: [UInt8]) -> [UInt8] {
        var writer = JSONWriter(capacity: putTailStart.count + 32 + data.count)
        writer.writeRaw(putTailStart)
        writer.writePath(path)
        writer.writeRaw(dataMember)
        writer.writeRaw(data)
        writer.writeASCII("}}")
        writer.closeObject()
        return writer.bytes
    }

    /// `,"a":"p","b":{"p":`, written once.
    private static let putTailStart: [UInt8] = {
        var writer = JSONWriter(capacity: 24)
        writer.writeKey(WireKey.action)
        writer.writeString(WireKey.putAction)
        writer.writeKey(WireKey.body)
        writer.writeASCII("{")
        writer.writeKey(WireKey.path, first: true)
        return writer.bytes
    }()

    /// `,"d":`, written once.
    private static let dataMember: [UInt8] = {
        var writer = JSONWriter(capacity: 8)
        writer.writeKey(WireKey.data)
        return writer.bytes
    }()
}

extension JSONWriter {
    /// `{"t":"d","d":{"r":`: a request's envelope up to its number.
    fileprivate mutating func writeRequestHead() {
        openEnvelope(layer: WireKey.dataLayer)
        writeASCII("{")
        writeKey(WireKey.requestNumber, first: true)
    }

    /// Everything after a request's number: its action, its body, and the envelope's end.
    fileprivate mutating func writeRequestTail(of action: ClientAction) {
        writeKey(WireKey.action)
        writeString(action.name)
        writeKey(WireKey.body)
        writeASCII("{")
        writeBody(of: action)
        writeASCII("}}")
        closeObject()
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
