import DataModel

extension ServerMessage {
    /// The message's JSON text, written straight into one byte array (the shapes of wire-protocol.md §3–§11, member
    /// order as in its examples).
    public func encoded() -> [UInt8] {
        var writer = JSONWriter(capacity: 96)
        encode(into: &writer)
        return writer.bytes
    }

    /// Appends the message's JSON text to `writer`.
    public func encode(into writer: inout JSONWriter) {
        switch self {
        case .handshake(let handshake):
            writer.openControl(WireKey.hello)
            writer.writeASCII("{")
            writer.writeKey(WireKey.helloTimestamp, first: true)
            writer.writeInteger(handshake.timestamp)
            writer.writeKey(WireKey.helloVersion)
            writer.writeString(handshake.version)
            writer.writeKey(WireKey.helloHost)
            writer.writeString(handshake.host)
            writer.writeKey(WireKey.helloSession)
            writer.writeString(handshake.sessionID)
            writer.writeASCII("}}}")
        case .pong:
            writer.openControl(WireKey.pong)
            writer.writeASCII("{}}}")
        case .reset(let host):
            writer.openControl(WireKey.reset)
            writer.writeString(host)
            writer.writeASCII("}}")
        case .shutdown(let reason):
            writer.openControl(WireKey.shutdown)
            writer.writeString(reason)
            writer.writeASCII("}}")
        case .error(let text):
            writer.openControl(WireKey.error)
            writer.writeString(text)
            writer.writeASCII("}}")
        case .response(let number, let status, let payload):
            writer.openEnvelope(layer: WireKey.dataLayer)
            writer.writeASCII("{")
            writer.writeKey(WireKey.requestNumber, first: true)
            writer.writeInteger(number)
            writer.writeKey(WireKey.body)
            writer.writeASCII("{")
            writer.writeKey(WireKey.status, first: true)
            writer.writeString(status.rawValue)
            writer.writeKey(WireKey.responseData)
            switch payload {
            case .text(let text): writer.writeString(text)
            case .data(let node): writer.writeExport(node)
            case .json(let value): writer.write(value)
            }
            writer.writeASCII("}}}")
        case .dataPush(let path, let data, let tag):
            writer.openPush(WireKey.dataPush, path: path)
            writer.writeExport(data)
            writer.closePush(tag: tag)
        case .mergePush(let path, let changes, let tag):
            writer.openPush(WireKey.mergePush, path: path)
            writer.writeMergeChanges(changes)
            writer.closePush(tag: tag)
        case .listenRevoked(let path, let query):
            writer.openPushBody(WireKey.listenRevoked)
            writer.writeKey(WireKey.path, first: true)
            writer.writePath(path)
            if let query {
                writer.writeKey(WireKey.query)
                writer.write(JSONValue.array([query]))
            }
            writer.writeASCII("}}}")
        case .authRevoked(let status, let reason):
            writer.writeRevocation(WireKey.authRevoked, status: status, reason: reason)
        case .appCheckRevoked(let status, let reason):
            writer.writeRevocation(WireKey.appCheckRevoked, status: status, reason: reason)
        case .securityDebug(let message):
            writer.openPushBody(WireKey.securityDebug)
            writer.writeKey(WireKey.securityDebugMessage, first: true)
            writer.writeString(message)
            writer.writeASCII("}}}")
        }
    }
}

extension JSONWriter {
    /// Writes `{"t":"c","d":{"t":TYPE,"d":` — the payload and `}}}` follow.
    fileprivate mutating func openControl(_ type: String) {
        openEnvelope(layer: WireKey.controlLayer)
        writeASCII("{")
        writeKey(WireKey.controlType, first: true)
        writeString(type)
        writeKey(WireKey.controlPayload)
    }

    /// Writes `{"t":"d","d":{"a":ACTION,"b":{` — the body's members and `}}}` follow.
    mutating func openPushBody(_ action: String) {
        openEnvelope(layer: WireKey.dataLayer)
        writeASCII("{")
        writeKey(WireKey.action, first: true)
        writeString(action)
        writeKey(WireKey.body)
        writeASCII("{")
    }

    /// Writes `{"t":"d","d":{"a":ACTION,"b":{"p":PATH,"d":` — the data follows, then ``closePush(tag:)``.
    mutating func openPush(_ action: String, path: Path) {
        openPushBody(action)
        writeKey(WireKey.path, first: true)
        writePath(path)
        writeKey(WireKey.data)
    }

    /// Writes `,"t":TAG}}}` or `}}}`.
    mutating func closePush(tag: Int?) {
        if let tag {
            writeRaw(Self.tagMember)
            writeInteger(tag)
        }
        writeASCII("}}}")
    }

    /// `,"t":`, built once: it is written per listen on the fan-out path.
    private static let tagMember: [UInt8] = {
        var writer = JSONWriter(capacity: 8)
        writer.writeKey(WireKey.tag)
        return writer.bytes
    }()

    /// Writes a merge push's `d`: relative paths to export-format values, in the given order.
    mutating func writeMergeChanges(_ changes: [MergeChange]) {
        writeASCII("{")
        for (index, change) in changes.enumerated() {
            if index > 0 { writeASCII(",") }
            writeRelativeTarget(change.target)
            writeASCII(":")
            writeExport(change.node)
        }
        closeObject()
    }

    fileprivate mutating func writeRevocation(_ action: String, status: ResponseStatus, reason: String) {
        openPushBody(action)
        writeKey(WireKey.revokeStatus, first: true)
        writeString(status.rawValue)
        writeKey(WireKey.revokeReason)
        writeString(reason)
        writeASCII("}}}")
    }
}
