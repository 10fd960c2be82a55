import DataModel
import Dispatch
import Primitives

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    /// Bytes before each section's content.
    static let sectionHeaderSize = 12
    /// The encoder hands its buffer to the file whenever it holds this much.
    static let spillBytes = 4 << 20

    // MARK: - Writing

    /// Encodes `contents` and writes it atomically to `path` (temporary file, fsync, rename, directory fsync).
    static func write(_ contents: Contents, to path: String) throws(JournalError) {
        let temporaryPath = path + ".tmp"
        let file = try FileDescriptor(opening: temporaryPath, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644)
        do throws(JournalError) {
            var buffer = magic
            RecordFraming.append(payload: header(contents), to: &buffer)
            try file.writeAll(buffer, path: temporaryPath)
            var offset = buffer.count
            for state in contents.states {
                offset += try writeSection(state, to: file, at: offset, path: temporaryPath)
            }
            try file.synchronize(path: temporaryPath)
        } catch {
            file.close()
            try? FileSystem.removeFile(temporaryPath)
            throw error
        }
        file.close()
        try FileSystem.rename(temporaryPath, to: path)
        try FileSystem.synchronizeDirectory(FileSystem.directoryName(of: path))
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

    /// Streams one shard's section starting at file offset `start`; returns its total size.
    private static func writeSection(_ state: ShardState, to file: FileDescriptor, at start: Int, path: String)
        throws(JournalError) -> Int
    {
        let sink = SectionSink(file: file, path: path)
        try file.writeAll([UInt8](repeating: 0, count: sectionHeaderSize), path: path)
        var writer = BinaryWriter()
        writer.spillThreshold = spillBytes
        writer.spill = { bytes in sink.take(&bytes) }
        writer.writeVarint(state.wide.deadLeaves.count)
        for dead in state.wide.deadLeaves.sorted() { NodeCodec.encode(dead, into: &writer) }
        NodeCodec.encode(state.root, into: &writer)
        sink.take(&writer.bytes)
        if let failure = sink.failure { throw failure }
        var sectionHeader = BinaryWriter()
        sectionHeader.writeUInt64(UInt64(sink.length))
        for shift in stride(from: 0, to: 32, by: 8) { sectionHeader.write(UInt8(truncatingIfNeeded: sink.checksum >> UInt32(shift))) }
        try file.writeAll(sectionHeader.bytes, path: path, at: start)
        return sectionHeaderSize + sink.length
    }

    // MARK: - Reading

    /// Reads and verifies the snapshot at `path`; shards are decoded in parallel.
    ///
    /// The file is mapped (``MappedFile``), checksummed slice by slice and decoded front to back, releasing the
    /// pages already read, so the file's bytes never add to the tree's memory at the peak.
    static func read(_ path: String) throws(JournalError) -> Contents {
        let file = try MappedFile(path: path)
        func failure(_ reason: String) -> JournalError { .corruptSnapshot(file: path, reason: reason) }
        guard file.bytes.count >= magic.count, file.bytes[0..<magic.count].elementsEqual(magic) else {
            throw failure("not a snapshot (bad magic)")
        }
        defer { withExtendedLifetime(file) {} }  // the decoded sections point into the mapping
        let raw = file.bytes
        let body = UnsafeRawBufferPointer(rebasing: raw[magic.count...])
        var scanner = RecordScanner(bytes: body)
        guard case .record(_, let headerRange) = scanner.next() else { throw failure("damaged header") }
        let header: Header
        do throws(BinaryDecodingError) {
            header = try decodeHeader(UnsafeRawBufferPointer(rebasing: body[headerRange]))
        } catch {
            throw failure("header: \(error.reason)")
        }
        var offset = magic.count + scanner.offset
        var sections: [UnsafeRawBufferPointer] = []
        for shard in 0..<header.layout.count {
            guard raw.count - offset >= sectionHeaderSize else { throw failure("shard \(shard): ends early") }
            let length = Int(clamping: RecordFraming.load64(raw, at: offset))
            let checksum = RecordFraming.load(raw, at: offset + 8)
            let start = offset + sectionHeaderSize
            guard length <= raw.count - start else { throw failure("shard \(shard): ends early") }
            let section = UnsafeRawBufferPointer(rebasing: raw[start..<(start + length)])
            guard file.checksum(start..<(start + length), sliceBytes: spillBytes) == checksum else {
                throw failure("shard \(shard): checksum mismatch at byte offset \(offset)")
            }
            sections.append(section)
            offset = start + length
        }
        guard offset == raw.count else { throw failure("trailing data") }
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
                    reader.releaseInterval = spillBytes
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

/// Receives a section's encoding in pieces: appends them to the file and keeps the running length and checksum.
final class SectionSink {
    let file: FileDescriptor
    let path: String
    private(set) var length = 0
    private(set) var checksum: UInt32 = 0
    /// The first write error; later pieces are dropped.
    private(set) var failure: JournalError?

    init(file: FileDescriptor, path: String) {
        self.file = file
        self.path = path
    }

    func take(_ bytes: inout [UInt8]) {
        defer { bytes.removeAll(keepingCapacity: true) }
        guard failure == nil, !bytes.isEmpty else { return }
        checksum = bytes.withUnsafeBytes { CRC32C.update(checksum, with: $0) }
        length += bytes.count
        do throws(JournalError) {
            try file.writeAll(bytes, path: path)
        } catch {
            failure = error
        }
    }
}

/// Lets `concurrentPerform` iterations write disjoint elements of one buffer.
struct UnsafeSendable<Value>: @unchecked Sendable {
    // Each iteration touches only its own index; the buffer outlives the concurrentPerform call.
    let value: Value
    init(_ value: Value) { self.value = value }
}
