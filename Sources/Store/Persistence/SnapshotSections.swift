import Primitives

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a snapshot (``StateSnapshotFile``) is made of: an
/// 8-byte magic, a header record (journal framing, ``RecordFraming``), then sections, each a UInt64 LE byte length,
/// a UInt32 LE CRC-32C of its bytes, and the bytes.
///
/// Sections are streamed: the encoder spills to the file every few megabytes and the length and checksum are
/// filled in afterwards, so writing never holds a second copy of a tree's encoding in memory. Reading maps the file
/// and checks each section's checksum slice by slice before it is decoded.
enum SnapshotSections {
    /// Bytes before each section's content.
    static let headerSize = 12
    /// The encoder hands its buffer to the file whenever it holds this much.
    static let spillBytes = 4 << 20

    /// Writes the file at `path` atomically (temporary file, fsync, rename, directory fsync): `magic`, the framed
    /// `header`, then one section per encoder, in order.
    static func write(to path: String, magic: [UInt8], header: [UInt8],
                      sections: [(inout BinaryWriter) -> Void]) throws(JournalError)
    {
        let temporaryPath = path + ".tmp"
        let file = try FileDescriptor(opening: temporaryPath, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644)
        do throws(JournalError) {
            var buffer = magic
            RecordFraming.append(payload: header, to: &buffer)
            try file.writeAll(buffer, path: temporaryPath)
            var offset = buffer.count
            for encode in sections {
                offset += try writeSection(encode, to: file, at: offset, path: temporaryPath)
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

    /// Streams one section starting at file offset `start`; returns its total size.
    private static func writeSection(_ encode: (inout BinaryWriter) -> Void, to file: FileDescriptor, at start: Int,
                                     path: String) throws(JournalError) -> Int
    {
        let sink = SectionSink(file: file, path: path)
        try file.writeAll([UInt8](repeating: 0, count: headerSize), path: path)
        var writer = BinaryWriter()
        writer.spillThreshold = spillBytes
        writer.spill = { bytes in sink.take(&bytes) }
        encode(&writer)
        sink.take(&writer.bytes)
        if let failure = sink.failure { throw failure }
        var sectionHeader = BinaryWriter()
        sectionHeader.writeUInt64(UInt64(sink.length))
        for shift in stride(from: 0, to: 32, by: 8) {
            sectionHeader.write(UInt8(truncatingIfNeeded: sink.checksum >> UInt32(shift)))
        }
        try file.writeAll(sectionHeader.bytes, path: path, at: start)
        return headerSize + sink.length
    }

    /// The header record's payload of the mapped snapshot `file` and the offset of its first section.
    static func header(of file: MappedFile, magic: [UInt8], path: String) throws(JournalError)
        -> (payload: UnsafeRawBufferPointer, sectionsStart: Int)
    {
        guard file.bytes.count >= magic.count, file.bytes[0..<magic.count].elementsEqual(magic) else {
            throw .corruptSnapshot(file: path, reason: "not a snapshot of this format (bad magic)")
        }
        let body = UnsafeRawBufferPointer(rebasing: file.bytes[magic.count...])
        var scanner = RecordScanner(bytes: body)
        guard case .record(_, let range) = scanner.next() else {
            throw .corruptSnapshot(file: path, reason: "damaged header")
        }
        return (UnsafeRawBufferPointer(rebasing: body[range]), magic.count + scanner.offset)
    }

    /// The verified section of `file` at `offset` and the offset after it; `name` names it in errors.
    static func section(of file: MappedFile, at offset: Int, name: String, path: String) throws(JournalError)
        -> (bytes: UnsafeRawBufferPointer, end: Int)
    {
        let raw = file.bytes
        guard raw.count - offset >= headerSize else {
            throw .corruptSnapshot(file: path, reason: "\(name): ends early")
        }
        let length = Int(clamping: RecordFraming.load64(raw, at: offset))
        let checksum = RecordFraming.load(raw, at: offset + 8)
        let start = offset + headerSize
        guard length <= raw.count - start else { throw .corruptSnapshot(file: path, reason: "\(name): ends early") }
        guard file.checksum(start..<(start + length), sliceBytes: spillBytes) == checksum else {
            throw .corruptSnapshot(file: path, reason: "\(name): checksum mismatch at byte offset \(offset)")
        }
        return (UnsafeRawBufferPointer(rebasing: raw[start..<(start + length)]), start + length)
    }
}

/// Receives a section's encoding in pieces: appends them to the file and keeps the running length and checksum.
private final class SectionSink {
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
