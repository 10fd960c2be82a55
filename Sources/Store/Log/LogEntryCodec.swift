import DataModel

/// The payload encoding of a journal record: one ``LogEntry`` (framed by ``RecordFraming``; values with
/// ``NodeCodec``).
///
/// ```
/// entry     = varint(sequence) f64(timestamp) operation
/// operation = 1 varint(rules version) caller write        a write
///           | 2 varint(version) 0                         rules: none
///           | 2 varint(version) 1 varint(n) byte*n         rules: their source text
///           | 3 string(node) string(session) (0 | 1 write) cluster: arm (or disarm) an onDisconnect write
///           | 4 string(node) string(session)              cluster: a connection ended
///           | 5 string(node)                              cluster: a node's heartbeat
///           | 6 string(node) f64(milliseconds)            cluster: a node silent that long is gone
/// caller    = 0 | 1 json                                   privileged | user with this auth
/// write     = 0 target value (0 | 1 string)                set, with an optional compare-and-set hash
///           | 1 path varint(count) (target value)*         update
///           | 2 path value                                 push
/// target    = 0 path | 1 path                              a node | its priority
/// value     = node varint(count) (path 0|1 server-value)*  the node and its placeholders (value | priority)
/// server-value = 0 | 1 f64                                 timestamp | increment by
/// json      = 0 | 1 | 2 | 3 f64 | 4 string | 5 varint(count) json* | 6 varint(count) (string json)*
///                                                          null false true number string array object
/// ```
/// Decoding treats the bytes as hostile: counts are bounded by the bytes left and JSON nesting by
/// ``maxJSONDepth``.
enum LogEntryCodec {
    /// Deepest auth JSON accepted when decoding (tokens' claims are far shallower).
    static let maxJSONDepth = 64

    // MARK: - Encoding

    static func encode(_ entry: LogEntry, into writer: inout BinaryWriter) {
        writer.writeVarint(entry.sequence)
        writer.writeUInt64(entry.timestamp.bitPattern)
        switch entry.operation {
        case .write(let write, let caller, let rulesVersion):
            writer.write(1)
            writer.writeVarint(rulesVersion)
            switch caller {
            case .privileged: writer.write(0)
            case .user(let auth):
                writer.write(1)
                encode(auth ?? .null, into: &writer)
            }
            encode(write, into: &writer)
        case .rules(let revision):
            writer.write(2)
            writer.writeVarint(revision.version)
            if let source = revision.source {
                writer.write(1)
                writer.writeVarint(source.count)
                writer.bytes.append(contentsOf: source)
            } else {
                writer.write(0)
            }
        case .armDisconnect(let node, let session, let write):
            writer.write(3)
            writer.writeString(node)
            writer.writeString(session)
            if let write {
                writer.write(1)
                encode(write, into: &writer)
            } else {
                writer.write(0)
            }
        case .disconnect(let node, let session):
            writer.write(4)
            writer.writeString(node)
            writer.writeString(session)
        case .heartbeat(let node):
            writer.write(5)
            writer.writeString(node)
        case .nodeDown(let node, let lastHeard):
            writer.write(6)
            writer.writeString(node)
            writer.writeUInt64(lastHeard)
        }
    }

    private static func encode(_ write: StoreWrite, into writer: inout BinaryWriter) {
        switch write {
        case .set(let target, let value, let expectedHash):
            writer.write(0)
            encode(target, into: &writer)
            encode(value, into: &writer)
            if let expectedHash {
                writer.write(1)
                writer.writeString(expectedHash)
            } else {
                writer.write(0)
            }
        case .update(let base, let entries):
            writer.write(1)
            NodeCodec.encode(base, into: &writer)
            writer.writeVarint(entries.count)
            for entry in entries {
                encode(entry.target, into: &writer)
                encode(entry.value, into: &writer)
            }
        case .push(let parent, let value):
            writer.write(2)
            NodeCodec.encode(parent, into: &writer)
            encode(value, into: &writer)
        }
    }

    private static func encode(_ target: WriteTarget, into writer: inout BinaryWriter) {
        switch target {
        case .node(let path):
            writer.write(0)
            NodeCodec.encode(path, into: &writer)
        case .priority(of: let path):
            writer.write(1)
            NodeCodec.encode(path, into: &writer)
        }
    }

    private static func encode(_ value: WriteValue, into writer: inout BinaryWriter) {
        NodeCodec.encode(value.node, into: &writer)
        writer.writeVarint(value.serverValues.count)
        for placeholder in value.serverValues {
            NodeCodec.encode(placeholder.path, into: &writer)
            writer.write(placeholder.isPriority ? 1 : 0)
            switch placeholder.value {
            case .timestamp: writer.write(0)
            case .increment(let delta):
                writer.write(1)
                writer.writeUInt64(delta.bitPattern)
            }
        }
    }

    private static func encode(_ json: JSONValue, into writer: inout BinaryWriter) {
        switch json {
        case .null: writer.write(0)
        case .bool(let flag): writer.write(flag ? 2 : 1)
        case .number(let number):
            writer.write(3)
            writer.writeUInt64(number.bitPattern)
        case .string(let text):
            writer.write(4)
            writer.writeString(text)
        case .array(let elements):
            writer.write(5)
            writer.writeVarint(elements.count)
            for element in elements { encode(element, into: &writer) }
        case .object(let members):
            writer.write(6)
            writer.writeVarint(members.count)
            for member in members {
                writer.writeString(member.key)
                encode(member.value, into: &writer)
            }
        }
    }

    // MARK: - Decoding

    static func decode(_ raw: UnsafeRawBufferPointer) throws(BinaryDecodingError) -> LogEntry {
        var reader = BinaryReader(bytes: raw)
        let sequence = try reader.readVarint()
        let timestamp = Double(bitPattern: try reader.readUInt64())
        guard timestamp.isFinite else { throw reader.failure("timestamp is not finite") }
        let operation: LogOperation
        switch try reader.readByte() {
        case 1:
            let rulesVersion = try reader.readVarint()
            let caller: WriteCaller
            switch try reader.readByte() {
            case 0: caller = .privileged
            case 1:
                let auth = try decodeJSON(from: &reader, depth: 0)
                caller = .user(auth: auth == .null ? nil : auth)
            default: throw reader.failure("unknown caller")
            }
            operation = .write(try decodeWrite(from: &reader), caller: caller, rulesVersion: rulesVersion)
        case 2:
            let version = try reader.readVarint()
            switch try reader.readByte() {
            case 0: operation = .rules(RulesRevision(version: version, source: nil))
            case 1:
                let count = try reader.readCount(limit: reader.remainingCount)
                var source: [UInt8] = []
                source.reserveCapacity(count)
                for _ in 0..<count { source.append(try reader.readByte()) }
                operation = .rules(RulesRevision(version: version, source: source))
            default: throw reader.failure("unknown rules form")
            }
        case 3:
            let node = try reader.readString()
            let session = try reader.readString()
            switch try reader.readByte() {
            case 0: operation = .armDisconnect(node: node, session: session, write: nil)
            case 1: operation = .armDisconnect(node: node, session: session, write: try decodeWrite(from: &reader))
            default: throw reader.failure("unknown onDisconnect form")
            }
        case 4:
            operation = .disconnect(node: try reader.readString(), session: try reader.readString())
        case 5:
            operation = .heartbeat(node: try reader.readString())
        case 6:
            operation = .nodeDown(try reader.readString(), lastHeard: try reader.readUInt64())
        default:
            throw reader.failure("unknown entry kind")
        }
        guard reader.isAtEnd else { throw reader.failure("trailing bytes") }
        return LogEntry(sequence: sequence, timestamp: timestamp, operation: operation)
    }

    private static func decodeWrite(from reader: inout BinaryReader) throws(BinaryDecodingError) -> StoreWrite {
        switch try reader.readByte() {
        case 0:
            let target = try decodeTarget(from: &reader)
            let value = try decodeValue(from: &reader)
            switch try reader.readByte() {
            case 0: return .set(target, value, expectedHash: nil)
            case 1: return .set(target, value, expectedHash: try reader.readString())
            default: throw reader.failure("unknown hash form")
            }
        case 1:
            let base = try NodeCodec.decodePath(from: &reader)
            let count = try reader.readCount(limit: reader.remainingCount)
            var entries: [UpdateEntry] = []
            entries.reserveCapacity(count)
            for _ in 0..<count {
                let target = try decodeTarget(from: &reader)
                entries.append(UpdateEntry(target: target, value: try decodeValue(from: &reader)))
            }
            return .update(base, entries)
        case 2:
            let parent = try NodeCodec.decodePath(from: &reader)
            return .push(parent, try decodeValue(from: &reader))
        default:
            throw reader.failure("unknown write kind")
        }
    }

    private static func decodeTarget(from reader: inout BinaryReader) throws(BinaryDecodingError) -> WriteTarget {
        switch try reader.readByte() {
        case 0: return .node(try NodeCodec.decodePath(from: &reader))
        case 1: return .priority(of: try NodeCodec.decodePath(from: &reader))
        default: throw reader.failure("unknown target kind")
        }
    }

    private static func decodeValue(from reader: inout BinaryReader) throws(BinaryDecodingError) -> WriteValue {
        let node = try NodeCodec.decodeNode(from: &reader)
        let count = try reader.readCount(limit: reader.remainingCount)
        var placeholders: [ServerValuePlaceholder] = []
        for _ in 0..<count {
            let path = try NodeCodec.decodePath(from: &reader)
            let isPriority: Bool
            switch try reader.readByte() {
            case 0: isPriority = false
            case 1: isPriority = true
            default: throw reader.failure("unknown placeholder form")
            }
            let value: ServerValue
            switch try reader.readByte() {
            case 0: value = .timestamp
            case 1: value = .increment(Double(bitPattern: try reader.readUInt64()))
            default: throw reader.failure("unknown server value")
            }
            placeholders.append(ServerValuePlaceholder(path: path, isPriority: isPriority, value: value))
        }
        return WriteValue(node: node, serverValues: placeholders)
    }

    private static func decodeJSON(from reader: inout BinaryReader, depth: Int) throws(BinaryDecodingError)
        -> JSONValue
    {
        guard depth <= maxJSONDepth else { throw reader.failure("auth nested deeper than \(maxJSONDepth)") }
        switch try reader.readByte() {
        case 0: return .null
        case 1: return .bool(false)
        case 2: return .bool(true)
        case 3: return .number(Double(bitPattern: try reader.readUInt64()))
        case 4: return .string(try reader.readString())
        case 5:
            let count = try reader.readCount(limit: reader.remainingCount)
            var elements: [JSONValue] = []
            for _ in 0..<count { elements.append(try decodeJSON(from: &reader, depth: depth + 1)) }
            return .array(elements)
        case 6:
            let count = try reader.readCount(limit: reader.remainingCount)
            var members: [(key: String, value: JSONValue)] = []
            for _ in 0..<count {
                let key = try reader.readString()
                members.append((key, try decodeJSON(from: &reader, depth: depth + 1)))
            }
            return .object(members)
        default:
            throw reader.failure("unknown JSON kind")
        }
    }
}
