import DataModel
import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A namespace snapshot: every shard's state at one consistent cut, in one file replaced atomically.
///
/// ```
/// "CANOPYS1"                      8-byte magic (the digit is the format version)
/// header record                   varint shard count, varint shard depth, varint next transaction id,
///                                 per shard: varint sequence, varint chunk count;
///                                 wide leaves: varint count (path node)*; wide priorities: varint count (path priority)*
/// per shard, its chunks           the shard's encoding split into records of at most `chunkBytes`:
///                                 varint conversion-mark count path*, node (the shard's tree)
/// ```
/// Every record uses the journal framing (``RecordFraming``), so each chunk is checksummed. A snapshot is never
/// repaired: any damage makes start-up fail with ``JournalError/corruptSnapshot(file:reason:)``.
enum SnapshotFile {
    /// What a snapshot holds.
    struct Contents: Sendable {
        let layout: ShardLayout
        let states: [ShardState]
        /// The next multi-shard transaction id; every transaction below it is inside the snapshot.
        let nextTransactionId: UInt64
    }

    static let magic: [UInt8] = Array("CANOPYS1".utf8)
    /// Largest chunk of a shard's encoding per record.
    static let chunkBytes = 64 << 20

    // MARK: - Writing

    /// Encodes `contents` and writes it atomically to `path` (temporary file, fsync, rename, directory fsync).
    /// Shards are encoded in parallel.
    static func write(_ contents: Contents, to path: String) throws(JournalError) {
        var encodedShards = [[UInt8]](repeating: [], count: contents.states.count)
        encodedShards.withUnsafeMutableBufferPointer { buffer in
            let output = UnsafeSendable(buffer)
            DispatchQueue.concurrentPerform(iterations: contents.states.count) { index in
                var writer = BinaryWriter()
                let state = contents.states[index]
                writer.writeVarint(state.wide.deadLeaves.count)
                for dead in state.wide.deadLeaves.sorted() { NodeCodec.encode(dead, into: &writer) }
                NodeCodec.encode(state.root, into: &writer)
                output.value[index] = writer.bytes
            }
        }
        var header = BinaryWriter()
        header.writeVarint(contents.layout.count)
        header.writeVarint(contents.layout.depth)
        header.writeVarint(contents.nextTransactionId)
        for (state, encoded) in zip(contents.states, encodedShards) {
            header.writeVarint(state.sequence)
            header.writeVarint(chunkCount(encoded.count))
        }
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

        let temporaryPath = path + ".tmp"
        let file = try FileDescriptor(opening: temporaryPath, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644)
        do throws(JournalError) {
            var buffer = magic
            RecordFraming.append(payload: header.bytes, to: &buffer)
            try write(&buffer, to: file, path: temporaryPath)
            for encoded in encodedShards {
                var start = 0
                repeat {
                    let end = min(start + chunkBytes, encoded.count)
                    encoded.withUnsafeBytes { raw in
                        RecordFraming.append(payload: UnsafeRawBufferPointer(rebasing: raw[start..<end]), to: &buffer)
                    }
                    try write(&buffer, to: file, path: temporaryPath)
                    start = end
                } while start < encoded.count
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

    private static func chunkCount(_ byteCount: Int) -> Int {
        max(1, (byteCount + chunkBytes - 1) / chunkBytes)
    }

    private static func write(_ buffer: inout [UInt8], to file: FileDescriptor, path: String) throws(JournalError) {
        try withBytes(of: buffer) { (raw) throws(JournalError) in try file.writeAll(raw, path: path) }
        buffer.removeAll(keepingCapacity: true)
    }

    // MARK: - Reading

    /// Reads and verifies the snapshot at `path`; shards are decoded in parallel.
    static func read(_ path: String) throws(JournalError) -> Contents {
        let bytes = try FileSystem.readFile(path)
        func failure(_ reason: String) -> JournalError { .corruptSnapshot(file: path, reason: reason) }
        guard bytes.count >= magic.count, Array(bytes[0..<magic.count]) == magic else {
            throw failure("not a snapshot (bad magic)")
        }
        return try withBytes(of: bytes) { (raw) throws(JournalError) -> Contents in
            let body = UnsafeRawBufferPointer(rebasing: raw[magic.count...])
            var scanner = RecordScanner(bytes: body)
            func nextRecord() throws(JournalError) -> UnsafeRawBufferPointer {
                switch scanner.next() {
                case .record(_, let payload):
                    return UnsafeRawBufferPointer(rebasing: body[payload])
                case .end:
                    throw failure("ends early")
                case .damaged(let offset, _):
                    throw failure("damaged record at byte offset \(offset + magic.count)")
                }
            }
            let headerPayload = try nextRecord()
            let header: Header
            do throws(BinaryDecodingError) {
                header = try decodeHeader(headerPayload)
            } catch {
                throw failure("header: \(error.reason)")
            }
            // A shard in one chunk (the usual case) is decoded in place; only larger ones are joined.
            var joinedShards: [UnsafeMutableRawBufferPointer] = []
            defer { for joined in joinedShards { joined.deallocate() } }
            var shardSlices: [UnsafeRawBufferPointer] = []
            for chunks in header.chunkCounts {
                var pieces: [UnsafeRawBufferPointer] = []
                for _ in 0..<chunks { pieces.append(try nextRecord()) }
                if pieces.count == 1 {
                    shardSlices.append(pieces[0])
                    continue
                }
                let joined = UnsafeMutableRawBufferPointer.allocate(
                    byteCount: pieces.reduce(0) { $0 + $1.count }, alignment: 1)
                joinedShards.append(joined)
                var offset = 0
                for piece in pieces {
                    UnsafeMutableRawBufferPointer(rebasing: joined[offset...]).copyMemory(from: piece)
                    offset += piece.count
                }
                shardSlices.append(UnsafeRawBufferPointer(joined))
            }
            guard case .end = scanner.next() else { throw failure("trailing data") }
            return try decodeShards(shardSlices, header: header, path: path)
        }
    }

    private struct Header {
        let layout: ShardLayout
        let nextTransactionId: UInt64
        let sequences: [UInt64]
        let chunkCounts: [Int]
        let wide: WideState
    }

    private static func decodeHeader(_ payload: UnsafeRawBufferPointer) throws(BinaryDecodingError) -> Header {
        var reader = BinaryReader(bytes: payload)
        let count = try reader.readCount(limit: ShardLayout.maxCount)
        let depth = try reader.readCount(limit: ShardLayout.maxDepth)
        guard count >= 1, depth >= 1 else { throw reader.failure("invalid layout") }
        let nextTransactionId = try reader.readVarint()
        var sequences: [UInt64] = []
        var chunkCounts: [Int] = []
        for _ in 0..<count {
            sequences.append(try reader.readVarint())
            chunkCounts.append(try reader.readCount(limit: 1 << 20))
        }
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
                      sequences: sequences, chunkCounts: chunkCounts, wide: wide)
    }

    private static func decodeShards(_ shardBytes: [UnsafeRawBufferPointer], header: Header, path: String)
        throws(JournalError)
        -> Contents
    {
        var results = [Result<ShardState, BinaryDecodingError>](
            repeating: .failure(BinaryDecodingError(offset: 0, reason: "not decoded")), count: shardBytes.count)
        let input = UnsafeSendable(shardBytes)
        results.withUnsafeMutableBufferPointer { buffer in
            let output = UnsafeSendable(buffer)
            DispatchQueue.concurrentPerform(iterations: shardBytes.count) { index in
                output.value[index] = Result { () throws(BinaryDecodingError) -> ShardState in
                    let raw = input.value[index]
                    var reader = BinaryReader(bytes: raw)
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
