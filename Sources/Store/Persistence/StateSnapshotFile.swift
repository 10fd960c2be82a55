import DataModel

/// A snapshot of a namespace's log state, in one file replaced atomically.
///
/// ```
/// "CANOPYS3"                      8-byte magic (the digit is the format version)
/// header record                   (journal framing, ``RecordFraming``) varint sequence, f64 timestamp,
///                                 varint rules version, 0 | 1 varint(n) byte*n (the rules source)
/// tree section                    UInt64 LE byte length, UInt32 LE CRC-32C of the bytes, then the tree
///                                 (``NodeCodec``)
/// ```
/// Written and read with ``SnapshotSections`` (streamed, checksummed). A snapshot is never repaired: any damage
/// makes start-up fail with ``JournalError/corruptSnapshot(file:reason:)``.
enum StateSnapshotFile {
    /// What a snapshot holds.
    struct Contents: Sendable {
        let root: Node
        let sequence: UInt64
        let timestamp: Double
        let rules: RulesRevision
    }

    static let magic: [UInt8] = Array("CANOPYS3".utf8)

    /// Encodes `contents` and writes it atomically to `path`.
    static func write(_ contents: Contents, to path: String) throws(JournalError) {
        try SnapshotSections.write(to: path, magic: magic, header: header(contents), sections: [
            { writer in NodeCodec.encode(contents.root, into: &writer) },
        ])
    }

    private static func header(_ contents: Contents) -> [UInt8] {
        var header = BinaryWriter()
        header.writeVarint(contents.sequence)
        header.writeUInt64(contents.timestamp.bitPattern)
        header.writeRules(contents.rules)
        return header.bytes
    }

    /// Reads and verifies the snapshot at `path`. The file is mapped (``MappedFile``), checksummed slice by slice
    /// and decoded front to back, releasing the pages already read.
    static func read(_ path: String) throws(JournalError) -> Contents {
        let file = try MappedFile(path: path)
        return try withExtendedLifetime(file) { () throws(JournalError) -> Contents in
            let (payload, sectionsStart) = try SnapshotSections.header(of: file, magic: magic, path: path)
            let (tree, end) = try SnapshotSections.section(of: file, at: sectionsStart, name: "tree", path: path)
            guard end == file.bytes.count else { throw .corruptSnapshot(file: path, reason: "trailing data") }
            do throws(BinaryDecodingError) {
                var header = BinaryReader(bytes: payload)
                let sequence = try header.readVarint()
                let timestamp = Double(bitPattern: try header.readUInt64())
                let rules = try header.readRules()
                guard header.isAtEnd, timestamp.isFinite else { throw header.failure("invalid header") }
                var reader = BinaryReader(bytes: tree)
                reader.releaseInterval = SnapshotSections.spillBytes
                let root = try NodeCodec.decodeNode(from: &reader)
                guard reader.isAtEnd else { throw reader.failure("trailing bytes in the tree") }
                return Contents(root: root, sequence: sequence, timestamp: timestamp, rules: rules)
            } catch {
                throw .corruptSnapshot(file: path, reason: "at offset \(error.offset): \(error.reason)")
            }
        }
    }
}
