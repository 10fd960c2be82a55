import DataModel
import Primitives

/// Everything a clustered replica's future depends on, as it stood after applying the log's entry at `position`:
/// a new or restarted node restores it and applies only the entries after it, reaching the state and decisions of
/// a replica that applied the whole log.
///
/// Besides the tree, sequence, time and rules of ``LogState``, that is the nodes' presence (armed onDisconnect
/// writes, last heard), each node's next proposal number and the proposals held until their predecessors arrive
/// (``NodeOrder``), and the count of undecodable proposals.
struct ReplicaSnapshot: Sendable {
    /// The log position of the last entry applied.
    let position: UInt64
    let root: Node
    let sequence: UInt64
    let timestamp: Double
    let rules: RulesRevision
    let presence: ClusterPresence
    let nodeOrder: NodeOrder
    let undecodable: Int
}

/// The bytes of a ``ReplicaSnapshot``:
///
/// ```
/// "CANOPYR1"                          magic (the digit is the format version)
/// varint position, varint sequence, u64 timestamp bits, rules (``BinaryWriter/writeRules(_:)``)
/// varint undecodable
/// varint n, n × (string node, u64 last-heard sequence)       presence: last heard
/// varint n, n × (varint length, entry)                       presence: armed writes as armDisconnect entries
/// varint n, n × (string node, varint next)                   node order: next numbers
/// varint n, n × (varint length, proposal)                    node order: held proposals (``ProposalCodec``)
/// tree                                                       ``NodeCodec``
/// u32 LE CRC-32C of everything before it
/// ```
/// Maps and sets are written in sorted order, so equal replicas write equal bytes. Decoding treats the bytes as
/// hostile (they come from the log's engine): a damaged snapshot is refused, never trusted.
enum ReplicaSnapshotCodec {
    static let magic: [UInt8] = Array("CANOPYR1".utf8)

    static func encode(_ snapshot: ReplicaSnapshot) -> [UInt8] {
        var writer = BinaryWriter()
        writer.bytes = magic
        writer.writeVarint(snapshot.position)
        writer.writeVarint(snapshot.sequence)
        writer.writeUInt64(snapshot.timestamp.bitPattern)
        writer.writeRules(snapshot.rules)
        writer.writeVarint(snapshot.undecodable)
        let heard = snapshot.presence.lastHeard.sorted { $0.key < $1.key }
        writer.writeVarint(heard.count)
        for (node, sequence) in heard {
            writer.writeString(node)
            writer.writeUInt64(sequence)
        }
        var armed: [[UInt8]] = []
        for node in snapshot.presence.armed.keys.sorted() {
            let sessions = snapshot.presence.armed[node] ?? [:]
            for session in sessions.keys.sorted() {
                guard let write = sessions[session] else { continue }
                armed.append(ProposalCodec.entry(.armDisconnect(node: node, session: session, write: write)))
            }
        }
        writeItems(armed, into: &writer)
        let next = snapshot.nodeOrder.next.sorted { $0.key < $1.key }
        writer.writeVarint(next.count)
        for (node, number) in next {
            writer.writeString(node)
            writer.writeVarint(number)
        }
        writeItems(snapshot.nodeOrder.heldProposals.map(ProposalCodec.encode), into: &writer)
        NodeCodec.encode(snapshot.root, into: &writer)
        let checksum = CRC32C.checksum(writer.bytes)
        for shift in stride(from: 0, to: 32, by: 8) { writer.write(UInt8(truncatingIfNeeded: checksum >> shift)) }
        return writer.bytes
    }

    private static func writeItems(_ items: [[UInt8]], into writer: inout BinaryWriter) {
        writer.writeVarint(items.count)
        for item in items {
            writer.writeVarint(item.count)
            writer.bytes += item
        }
    }

    static func decode(_ bytes: [UInt8]) throws(BinaryDecodingError) -> ReplicaSnapshot {
        let decoded: Result<ReplicaSnapshot, BinaryDecodingError> = bytes.withUnsafeBytes { raw in
            do throws(BinaryDecodingError) {
                return .success(try decode(raw))
            } catch {
                return .failure(error)
            }
        }
        return try decoded.get()
    }

    private static func decode(_ raw: UnsafeRawBufferPointer) throws(BinaryDecodingError) -> ReplicaSnapshot {
        guard raw.count >= magic.count + 4, raw.prefix(magic.count).elementsEqual(magic) else {
            throw BinaryDecodingError(offset: 0, reason: "not a replica snapshot")
        }
        let body = UnsafeRawBufferPointer(rebasing: raw[0..<(raw.count - 4)])
        let stored = raw.suffix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard CRC32C.checksum(body) == stored else {
            throw BinaryDecodingError(offset: body.count, reason: "checksum mismatch")
        }
        var reader = BinaryReader(bytes: body, offset: magic.count)
        let position = try reader.readVarint()
        let sequence = try reader.readVarint()
        let timestamp = Double(bitPattern: try reader.readUInt64())
        guard timestamp.isFinite else { throw reader.failure("timestamp is not finite") }
        let rules = try reader.readRules()
        let undecodable = try reader.readCount(limit: Int.max)
        var presence = ClusterPresence()
        for _ in 0..<(try reader.readCount(limit: reader.remainingCount)) {
            let node = try reader.readString()
            presence.lastHeard[node] = try reader.readUInt64()
        }
        for _ in 0..<(try reader.readCount(limit: reader.remainingCount)) {
            let count = try reader.readCount(limit: reader.remainingCount)
            let entryStart = reader.offset
            try reader.skip(count)
            let decoded = try LogEntryCodec.decode(UnsafeRawBufferPointer(rebasing: body[entryStart..<(entryStart + count)]))
            guard case .armDisconnect(let node, let session, let write?) = decoded.operation else {
                throw reader.failure("an armed write that is not one")
            }
            presence.armed[node, default: [:]][session] = write
        }
        var next: [String: UInt64] = [:]
        for _ in 0..<(try reader.readCount(limit: reader.remainingCount)) {
            let node = try reader.readString()
            next[node] = try reader.readVarint()
        }
        var held: [Proposal] = []
        for _ in 0..<(try reader.readCount(limit: reader.remainingCount)) {
            held.append(try ProposalCodec.decode(try readBytes(from: &reader, in: body)))
        }
        let root = try NodeCodec.decodeNode(from: &reader)
        guard reader.isAtEnd else { throw reader.failure("trailing bytes") }
        return ReplicaSnapshot(position: position, root: root, sequence: sequence, timestamp: timestamp,
                               rules: rules, presence: presence,
                               nodeOrder: NodeOrder(next: next, held: held), undecodable: undecodable)
    }

    /// A length-prefixed byte string.
    private static func readBytes(from reader: inout BinaryReader, in body: UnsafeRawBufferPointer)
        throws(BinaryDecodingError) -> [UInt8]
    {
        let count = try reader.readCount(limit: reader.remainingCount)
        let start = reader.offset
        try reader.skip(count)
        return Array(body[start..<(start + count)])
    }
}
