import DataModel
import Primitives

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A snapshot of a namespace's log state, in one file replaced atomically.
///
/// ```
/// "CANOPYS3"                      8-byte magic (the digit is the format version)
/// header record                   (journal framing, ``RecordFraming``) varint sequence, f64 timestamp,
///                                 varint rules version, 0 | 1 varint(n) byte*n (the rules source)
/// tree section                    UInt64 LE byte length, UInt32 LE CRC-32C of the bytes, then the tree
///                                 (``NodeCodec``)
/// ```
/// The tree is streamed: the encoder spills to the file every few megabytes and fills in the length and checksum
/// afterwards, so writing a snapshot never holds a second copy of the tree's encoding in memory. A snapshot is never
/// repaired: any damage makes start-up fail with ``JournalError/corruptSnapshot(file:reason:)``.
enum StateSnapshotFile {
    /// What a snapshot holds.
    struct Contents: Sendable {
        let root: Node
        let sequence: UInt64
        let timestamp: Double
        let rules: RulesRevision
    }

    static let magic: [UInt8] = Array("CANOPYS3".utf8)
    /// Bytes before the tree section's content.
    static let sectionHeaderSize = 12
    /// The encoder hands its buffer to the file whenever it holds this much.
    static let spillBytes = 4 << 20

    /// Encodes `contents` and writes it atomically to `path` (temporary file, fsync, rename, directory fsync).
    static func write(_ contents: Contents, to path: String) throws(JournalError) {
        let temporaryPath = path + ".tmp"
        let file = try FileDescriptor(opening: temporaryPath, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644)
        do throws(JournalError) {
            var buffer = magic
            RecordFraming.append(payload: header(contents), to: &buffer)
            try file.writeAll(buffer, path: temporaryPath)
            let sink = SectionSink(file: file, path: temporaryPath)
            try file.writeAll([UInt8](repeating: 0, count: sectionHeaderSize), path: temporaryPath)
            var writer = BinaryWriter()
            writer.spillThreshold = spillBytes
            writer.spill = { bytes in sink.take(&bytes) }
            NodeCodec.encode(contents.root, into: &writer)
            sink.take(&writer.bytes)
            if let failure = sink.failure { throw failure }
            var sectionHeader = BinaryWriter()
            sectionHeader.writeUInt64(UInt64(sink.length))
            for shift in stride(from: 0, to: 32, by: 8) {
                sectionHeader.write(UInt8(truncatingIfNeeded: sink.checksum >> UInt32(shift)))
            }
            try file.writeAll(sectionHeader.bytes, path: temporaryPath, at: buffer.count)
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
        header.writeVarint(contents.sequence)
        header.writeUInt64(contents.timestamp.bitPattern)
        header.writeVarint(contents.rules.version)
        if let source = contents.rules.source {
            header.write(1)
            header.writeVarint(source.count)
            header.bytes.append(contentsOf: source)
        } else {
            header.write(0)
        }
        return header.bytes
    }

    /// Reads and verifies the snapshot at `path`. The file is mapped (``MappedFile``), checksummed slice by slice
    /// and decoded front to back, releasing the pages already read.
    static func read(_ path: String) throws(JournalError) -> Contents {
        let file = try MappedFile(path: path)
        func failure(_ reason: String) -> JournalError { .corruptSnapshot(file: path, reason: reason) }
        guard file.bytes.count >= magic.count, file.bytes[0..<magic.count].elementsEqual(magic) else {
            throw failure("not a snapshot of this format (bad magic)")
        }
        return try withExtendedLifetime(file) { () throws(JournalError) -> Contents in
            let raw = file.bytes
            let body = UnsafeRawBufferPointer(rebasing: raw[magic.count...])
            var scanner = RecordScanner(bytes: body)
            guard case .record(_, let headerRange) = scanner.next() else { throw failure("damaged header") }
            let offset = magic.count + scanner.offset
            guard raw.count - offset >= sectionHeaderSize else { throw failure("tree section ends early") }
            let length = Int(clamping: RecordFraming.load64(raw, at: offset))
            let checksum = RecordFraming.load(raw, at: offset + 8)
            let start = offset + sectionHeaderSize
            guard length <= raw.count - start else { throw failure("tree section ends early") }
            guard start + length == raw.count else { throw failure("trailing data") }
            guard file.checksum(start..<(start + length), sliceBytes: spillBytes) == checksum else {
                throw failure("tree section: checksum mismatch at byte offset \(offset)")
            }
            do throws(BinaryDecodingError) {
                var header = BinaryReader(bytes: UnsafeRawBufferPointer(rebasing: body[headerRange]))
                let sequence = try header.readVarint()
                let timestamp = Double(bitPattern: try header.readUInt64())
                let version = try header.readVarint()
                var source: [UInt8]?
                switch try header.readByte() {
                case 0: source = nil
                case 1:
                    let count = try header.readCount(limit: header.remainingCount)
                    var bytes: [UInt8] = []
                    for _ in 0..<count { bytes.append(try header.readByte()) }
                    source = bytes
                default: throw header.failure("unknown rules form")
                }
                guard header.isAtEnd, timestamp.isFinite else { throw header.failure("invalid header") }
                var reader = BinaryReader(bytes: UnsafeRawBufferPointer(rebasing: raw[start..<(start + length)]))
                reader.releaseInterval = spillBytes
                let root = try NodeCodec.decodeNode(from: &reader)
                guard reader.isAtEnd else { throw reader.failure("trailing bytes in the tree") }
                return Contents(root: root, sequence: sequence, timestamp: timestamp,
                                rules: RulesRevision(version: version, source: source))
            } catch {
                throw failure("at offset \(error.offset): \(error.reason)")
            }
        }
    }
}
