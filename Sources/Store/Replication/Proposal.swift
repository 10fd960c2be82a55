import DataModel

/// What one node appends to a replicated log for one task: the entries of a connection's writes (or a rules
/// revision), stamped with the proposing node's clock.
///
/// The entries' sequence numbers and times are not final: each replica gives every entry the next sequence
/// number when it applies it, and the time `max(previous entry's, clock)`; the rules version that judges a write is
/// the one in force at its place in the log. The proposer's identity lets it find its own proposal among the
/// entries and answer its clients.
struct Proposal: Sendable, Equatable {
    /// The proposing node.
    let node: String
    /// Increases by one per proposal of the node.
    let number: UInt64
    /// The proposing node's clock (milliseconds since the Unix epoch) when it proposed.
    let clock: Double
    /// The operations, in order.
    let operations: [LogOperation]

    /// The log's de-duplication id: a retried append of the same proposal is stored once.
    var id: String { Self.id(node: node, number: number) }

    /// The de-duplication id of proposal `number` of `node`.
    static func id(node: String, number: UInt64) -> String { "\(node)-\(number)" }
}

/// The payload encoding of a ``Proposal``: `'P' 1 varint(n) node varint(number) f64(clock) varint(count)
/// (varint(n) entry)*`, each entry in ``LogEntryCodec``'s encoding with sequence 0 and the proposal's clock.
/// Decoding treats the bytes as hostile, like the journal's.
enum ProposalCodec {
    private static let magic: UInt8 = 0x50
    private static let version: UInt8 = 1

    static func encode(_ proposal: Proposal) -> [UInt8] {
        encode(node: proposal.node, number: proposal.number, clock: proposal.clock,
               entries: proposal.operations.map(entry))
    }

    /// One operation's encoding inside a proposal (its entry's sequence and time are the replica's to give).
    static func entry(_ operation: LogOperation) -> [UInt8] {
        var writer = BinaryWriter()
        LogEntryCodec.encode(LogEntry(sequence: 0, timestamp: 0, operation: operation), into: &writer)
        return writer.bytes
    }

    /// Bytes a proposal adds around its entries (at most).
    static let overheadBytes = 64

    /// A proposal of already encoded entries (``entry(_:)``).
    static func encode(node: String, number: UInt64, clock: Double, entries: [[UInt8]]) -> [UInt8] {
        var writer = BinaryWriter()
        writer.write(magic)
        writer.write(version)
        writer.writeString(node)
        writer.writeVarint(number)
        writer.writeUInt64(clock.bitPattern)
        writer.writeVarint(entries.count)
        for entry in entries {
            writer.writeVarint(entry.count)
            writer.bytes += entry
        }
        return writer.bytes
    }

    static func decode(_ payload: [UInt8]) throws(BinaryDecodingError) -> Proposal {
        let decoded: Result<Proposal, BinaryDecodingError> = payload.withUnsafeBytes { raw in
            do throws(BinaryDecodingError) {
                return .success(try decode(raw))
            } catch {
                return .failure(error)
            }
        }
        return try decoded.get()
    }

    private static func decode(_ raw: UnsafeRawBufferPointer) throws(BinaryDecodingError) -> Proposal {
        var reader = BinaryReader(bytes: raw)
        guard try reader.readByte() == magic else { throw reader.failure("not a proposal") }
        guard try reader.readByte() == version else { throw reader.failure("unknown proposal version") }
        let node = try reader.readString()
        let number = try reader.readVarint()
        let clock = Double(bitPattern: try reader.readUInt64())
        guard clock.isFinite else { throw reader.failure("clock is not finite") }
        let count = try reader.readCount(limit: reader.remainingCount)
        var operations: [LogOperation] = []
        operations.reserveCapacity(count)
        for _ in 0..<count {
            let length = try reader.readCount(limit: reader.remainingCount)
            let start = reader.offset
            try reader.skip(length)
            let entry = try LogEntryCodec.decode(UnsafeRawBufferPointer(rebasing: raw[start..<(start + length)]))
            operations.append(entry.operation)
        }
        guard reader.isAtEnd else { throw reader.failure("trailing bytes") }
        return Proposal(node: node, number: number, clock: clock, operations: operations)
    }
}
