import DataModel
import Dispatch

/// A sharded-format snapshot (read to migrate such directories; written only by tests that build one): every
/// shard's state at one consistent cut, in one file replaced atomically.
///
/// ```
/// "CANOPYS2"                      8-byte magic (the digit is the format version)
/// header record                   (journal framing, ``RecordFraming``) varint shard count, varint shard depth,
///                                 varint next transaction id, per shard varint sequence;
///                                 wide leaves: varint count (path node)*; wide priorities: varint count (path priority)*
/// per shard, a section            UInt64 LE byte length, UInt32 LE CRC-32C of the bytes, then the bytes:
///                                 varint conversion-mark count path*, node (the shard's tree, ``NodeCodec``)
/// ```
/// Sections are streamed: the encoder spills to the file every few megabytes and fills in the length and checksum
/// afterwards, so writing a snapshot never holds a second copy of the tree's encoding in memory. A snapshot is never
/// repaired: any damage makes start-up fail with ``JournalError/corruptSnapshot(file:reason:)``.
enum SnapshotFile {
    /// What a snapshot holds.
    struct Contents: Sendable {
        let layout: ShardLayout
        let states: [ShardState]
        /// The next multi-shard transaction id; every transaction below it is inside the snapshot.
        let nextTransactionId: UInt64
    }

    static let magic: [UInt8] = Array("CANOPYS2".utf8)

    // MARK: - Writing

    /// Encodes `contents` and writes it atomically to `path`.
    static func write(_ contents: Contents, to path: String) throws(JournalError) {
        let sections = contents.states.map { state in
            { (writer: inout BinaryWriter) in
                writer.writeVarint(state.wide.deadLeaves.count)
                for dead in state.wide.deadLeaves.sorted() { NodeCodec.encode(dead, into: &writer) }
                NodeCodec.encode(state.root, into: &writer)
            }
        }
        try SnapshotSections.write(to: path, magic: magic, header: header(contents), sections: sections)
    }

    private static func header(_ contents: Contents) -> [UInt8] {
        var header = BinaryWriter()
        header.writeVarint(contents.layout.count)
        header.writeVarint(contents.layout.depth)
        header.writeVarint(contents.nextTransactionId)
        for state in contents.states { header.writeVarint(state.sequence) }
        let wide = contents.states.first?.wide ?? WideState()
        header.writeVarint(wide.leaves.count)
        for (leafPath, leaf) in wide.leaves.sorted(by: { $0.key < $1.key }) {
            NodeCodec.encode(leafPath, into: &header)
            NodeCodec.encode(leaf, into: &header)
        }
        header.writeVarint(wide.priorities.count)
        for (priorityPath, priority) in wide.priorities.sorted(by: { $0.key < $1.key }) {
            NodeCodec.encode(priorityPath, into: &header)
            NodeCodec.encode(priority, into: &header)
        }
        return header.bytes
    }

    // MARK: - Reading

    /// Reads and verifies the snapshot at `path`; shards are decoded in parallel.
    ///
    /// The file is mapped (``MappedFile``), checksummed slice by slice and decoded front to back, releasing the
    /// pages already read, so the file's bytes never add to the tree's memory at the peak.
    static func read(_ path: String) throws(JournalError) -> Contents {
        let file = try MappedFile(path: path)
        defer { withExtendedLifetime(file) {} }  // the decoded sections point into the mapping
        let (payload, sectionsStart) = try SnapshotSections.header(of: file, magic: magic, path: path)
        let header: Header
        do throws(BinaryDecodingError) {
            header = try decodeHeader(payload)
        } catch {
            throw .corruptSnapshot(file: path, reason: "header: \(error.reason)")
        }
        var offset = sectionsStart
        var sections: [UnsafeRawBufferPointer] = []
        for shard in 0..<header.layout.count {
            let (section, end) = try SnapshotSections.section(of: file, at: offset, name: "shard \(shard)", path: path)
            sections.append(section)
            offset = end
        }
        guard offset == file.bytes.count else { throw .corruptSnapshot(file: path, reason: "trailing data") }
        return try decodeShards(sections, header: header, path: path)
    }

    private struct Header {
        let layout: ShardLayout
        let nextTransactionId: UInt64
        let sequences: [UInt64]
        let wide: WideState
    }

    private static func decodeHeader(_ payload: UnsafeRawBufferPointer) throws(BinaryDecodingError) -> Header {
        var reader = BinaryReader(bytes: payload)
        let count = try reader.readCount(limit: ShardLayout.maxCount)
        let depth = try reader.readCount(limit: ShardLayout.maxDepth)
        guard count >= 1, depth >= 1 else { throw reader.failure("invalid layout") }
        let nextTransactionId = try reader.readVarint()
        var sequences: [UInt64] = []
        for _ in 0..<count { sequences.append(try reader.readVarint()) }
        var wide = WideState()
        for _ in 0..<(try reader.readCount(limit: payload.count)) {
            let path = try NodeCodec.decodePath(from: &reader)
            wide.leaves[path] = try NodeCodec.decodeNode(from: &reader)
        }
        for _ in 0..<(try reader.readCount(limit: payload.count)) {
            let path = try NodeCodec.decodePath(from: &reader)
            wide.priorities[path] = try NodeCodec.decodePriority(from: &reader)
        }
        guard reader.isAtEnd else { throw reader.failure("trailing bytes in header") }
        return Header(layout: ShardLayout(count: count, depth: depth), nextTransactionId: nextTransactionId,
                      sequences: sequences, wide: wide)
    }

    private static func decodeShards(_ sections: [UnsafeRawBufferPointer], header: Header, path: String)
        throws(JournalError) -> Contents
    {
        var results = [Result<ShardState, BinaryDecodingError>](
            repeating: .failure(BinaryDecodingError(offset: 0, reason: "not decoded")), count: sections.count)
        let input = UnsafeSendable(sections)
        results.withUnsafeMutableBufferPointer { buffer in
            let output = UnsafeSendable(buffer)
            DispatchQueue.concurrentPerform(iterations: sections.count) { index in
                output.value[index] = Result { () throws(BinaryDecodingError) -> ShardState in
                    let raw = input.value[index]
                    var reader = BinaryReader(bytes: raw)
                    reader.releaseInterval = SnapshotSections.spillBytes
                    var state = ShardState()
                    state.wide = header.wide
                    for _ in 0..<(try reader.readCount(limit: raw.count)) {
                        state.wide.deadLeaves.insert(try NodeCodec.decodePath(from: &reader))
                    }
                    state.root = try NodeCodec.decodeNode(from: &reader)
                    guard reader.isAtEnd else { throw reader.failure("trailing bytes") }
                    state.sequence = header.sequences[index]
                    return state
                }
            }
        }
        var states: [ShardState] = []
        for (index, result) in results.enumerated() {
            switch result {
            case .success(let state): states.append(state)
            case .failure(let error):
                throw .corruptSnapshot(file: path, reason: "shard \(index) at offset \(error.offset): \(error.reason)")
            }
        }
        return Contents(layout: header.layout, states: states, nextTransactionId: header.nextTransactionId)
    }
}

/// Lets `concurrentPerform` iterations write disjoint elements of one buffer.
struct UnsafeSendable<Value>: @unchecked Sendable {
    // Each iteration touches only its own index; the buffer outlives the concurrentPerform call.
    let value: Value
    init(_ value: Value) { self.value = value }
}
