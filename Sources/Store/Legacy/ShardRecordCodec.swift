import DataModel

/// The payload encoding of a sharded-format journal record (framed by ``RecordFraming``), using ``NodeCodec`` for
/// values; decoded to migrate such directories, encoded only by tests that build one.
///
/// ```
/// record    = kind varint(sequence) [transaction] varint(count) operation*
/// kind      = 1 single-shard write | 2 part of a multi-shard write (followed by the transaction)
/// transaction = varint(id) varint(count) varint(shard index)*
/// operation = 0 path node            set
///           | 1 path optional-priority   setPriority
///           | 2 path                 clearWide
///           | 3 path node            setWideLeaf
///           | 4 path optional-priority   setWidePriority
///           | 5 path                 markWideLeafDead
///           | 6 path                 removeWideLeaf
/// optional-priority = 0 | 1 priority
/// ```
enum ShardRecordCodec {
    private static let singleKind: UInt8 = 1
    private static let transactionKind: UInt8 = 2

    /// Appends the payload of `record` to `writer`.
    static func encode(_ record: ShardRecord, into writer: inout BinaryWriter) {
        encode(sequence: record.sequence, transaction: record.transaction, operations: record.operations,
               into: &writer)
    }

    /// Appends the payload of a record made of its parts, so that callers holding one operation need no array.
    static func encode(sequence: UInt64, transaction: TransactionTag?, operations: some Collection<ShardOperation>,
                       into writer: inout BinaryWriter)
    {
        if let transaction {
            writer.write(transactionKind)
            writer.writeVarint(sequence)
            writer.writeVarint(transaction.id)
            writer.writeVarint(transaction.participants.count)
            for shard in transaction.participants { writer.writeVarint(shard) }
        } else {
            writer.write(singleKind)
            writer.writeVarint(sequence)
        }
        writer.writeVarint(operations.count)
        for operation in operations { encode(operation, into: &writer) }
    }

    private static func encode(_ operation: ShardOperation, into writer: inout BinaryWriter) {
        switch operation {
        case .set(let path, let node):
            writer.write(0)
            NodeCodec.encode(path, into: &writer)
            NodeCodec.encode(node, into: &writer)
        case .setPriority(let path, let priority):
            writer.write(1)
            NodeCodec.encode(path, into: &writer)
            encode(optional: priority, into: &writer)
        case .clearWide(let path):
            writer.write(2)
            NodeCodec.encode(path, into: &writer)
        case .setWideLeaf(let path, let node):
            writer.write(3)
            NodeCodec.encode(path, into: &writer)
            NodeCodec.encode(node, into: &writer)
        case .setWidePriority(let path, let priority):
            writer.write(4)
            NodeCodec.encode(path, into: &writer)
            encode(optional: priority, into: &writer)
        case .markWideLeafDead(let path):
            writer.write(5)
            NodeCodec.encode(path, into: &writer)
        case .removeWideLeaf(let path):
            writer.write(6)
            NodeCodec.encode(path, into: &writer)
        }
    }

    private static func encode(optional priority: Priority?, into writer: inout BinaryWriter) {
        if let priority {
            writer.write(1)
            NodeCodec.encode(priority, into: &writer)
        } else {
            writer.write(0)
        }
    }

    /// Decodes a payload; `maxShards` bounds participant indexes.
    static func decode(_ bytes: UnsafeRawBufferPointer, maxShards: Int) throws(BinaryDecodingError) -> ShardRecord {
        var reader = BinaryReader(bytes: bytes)
        let kind = try reader.readByte()
        guard kind == singleKind || kind == transactionKind else { throw reader.failure("unknown record kind") }
        let sequence = try reader.readVarint()
        var transaction: TransactionTag?
        if kind == transactionKind {
            let id = try reader.readVarint()
            let count = try reader.readCount(limit: maxShards)
            var participants: [Int] = []
            for _ in 0..<count { participants.append(try reader.readCount(limit: maxShards - 1)) }
            transaction = TransactionTag(id: id, participants: participants)
        }
        let count = try reader.readCount(limit: bytes.count)
        var operations: [ShardOperation] = []
        operations.reserveCapacity(min(count, 1024))
        for _ in 0..<count { operations.append(try decodeOperation(from: &reader)) }
        guard reader.isAtEnd else { throw reader.failure("trailing bytes after the record") }
        return ShardRecord(sequence: sequence, transaction: transaction, operations: operations)
    }

    private static func decodeOperation(from reader: inout BinaryReader) throws(BinaryDecodingError)
        -> ShardOperation
    {
        let code = try reader.readByte()
        let path = try NodeCodec.decodePath(from: &reader)
        switch code {
        case 0: return .set(path, try NodeCodec.decodeNode(from: &reader))
        case 1: return .setPriority(path, try decodeOptionalPriority(from: &reader))
        case 2: return .clearWide(path)
        case 3: return .setWideLeaf(path, try NodeCodec.decodeNode(from: &reader))
        case 4: return .setWidePriority(path, try decodeOptionalPriority(from: &reader))
        case 5: return .markWideLeafDead(path)
        case 6: return .removeWideLeaf(path)
        default: throw reader.failure("unknown operation \(code)")
        }
    }

    private static func decodeOptionalPriority(from reader: inout BinaryReader) throws(BinaryDecodingError)
        -> Priority?
    {
        switch try reader.readByte() {
        case 0: return nil
        case 1: return try NodeCodec.decodePriority(from: &reader)
        default: throw reader.failure("bad optional priority")
        }
    }
}
