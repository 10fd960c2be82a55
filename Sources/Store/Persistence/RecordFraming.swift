import Primitives

/// The on-disk framing of one journal record: a 12-byte header followed by the payload.
///
/// ```
/// offset 0  UInt32 LE  payload length in bytes (1 ... maxPayloadBytes)
/// offset 4  UInt32 LE  CRC-32C of the payload
/// offset 8  UInt32 LE  CRC-32C of header bytes 0..<8
/// offset 12 payload
/// ```
///
/// The header has its own checksum so a damaged length is recognised as damage before it is trusted: without it, a
/// flipped bit in the length of a record in the middle of a file would look like a record running past the end of
/// the file, i.e. like a torn tail, and recovery would silently drop every record after it.
enum RecordFraming {
    /// Bytes before the payload.
    static let headerSize = 12
    /// Largest payload accepted (1 GiB); a REST write may be 256 MB of JSON, and larger lengths mean damage.
    static let maxPayloadBytes = 1 << 30

    /// Appends the framed record for `payload` to `output`.
    static func append(payload: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: headerSize))
        output.append(contentsOf: payload)
        output.withUnsafeMutableBytes { completeHeader(in: $0, at: start) }
    }

    /// Appends the framed record for `payload` to `output`.
    static func append(payload: [UInt8], to output: inout [UInt8]) {
        payload.withUnsafeBytes { append(payload: $0, to: &output) }
    }

    /// Appends a framed record whose payload `encodePayload` writes straight into `writer` (which must not spill):
    /// the header is reserved first and filled in afterwards, so the payload is never copied.
    static func append(to writer: inout BinaryWriter, payload encodePayload: (inout BinaryWriter) -> Void) {
        let start = writer.bytes.count
        writer.bytes.append(contentsOf: repeatElement(0, count: headerSize))
        encodePayload(&writer)
        writer.bytes.withUnsafeMutableBytes { completeHeader(in: $0, at: start) }
    }

    /// Fills in the header reserved at `start` for the payload that runs from after it to the end of `bytes`.
    private static func completeHeader(in bytes: UnsafeMutableRawBufferPointer, at start: Int) {
        let payloadStart = start + headerSize
        let length = bytes.count - payloadStart
        precondition(length > 0 && length <= maxPayloadBytes, "journal payload size out of range")
        let payload = UnsafeRawBufferPointer(rebasing: bytes[payloadStart...])
        bytes.storeBytes(of: UInt32(length).littleEndian, toByteOffset: start, as: UInt32.self)
        bytes.storeBytes(of: CRC32C.checksum(payload).littleEndian, toByteOffset: start + 4, as: UInt32.self)
        let header = UnsafeRawBufferPointer(rebasing: bytes[start..<(start + 8)])
        bytes.storeBytes(of: CRC32C.checksum(header).littleEndian, toByteOffset: start + 8, as: UInt32.self)
    }

    static func load64(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        UInt64(load(bytes, at: offset)) | UInt64(load(bytes, at: offset + 4)) << 32
    }

    static func load(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
            | UInt32(bytes[offset + 3]) << 24
    }
}

/// What ``RecordScanner`` found at one offset of a journal segment.
enum ScannedRecord: Equatable {
    /// A complete record whose checksums match; `payload` indexes the segment's bytes.
    case record(offset: Int, payload: Range<Int>)
    /// The segment ends cleanly here.
    case end
    /// The bytes at `offset` are not a valid record.
    case damaged(offset: Int, damage: RecordDamage)
}

/// How a record is damaged; ``RecordScanner/isTornTail(at:damage:)`` decides whether that is a torn final write.
enum RecordDamage: Equatable {
    /// Fewer bytes remain than a header needs.
    case truncatedHeader
    /// The header checksum does not match (the length cannot be trusted).
    case badHeader
    /// The header is valid but the payload runs past the end of the file.
    case truncatedPayload(end: Int)
    /// The header is valid, the payload is complete, but its checksum does not match.
    case badPayload(end: Int)
}

/// Walks the records of one journal segment held in memory.
struct RecordScanner {
    private let bytes: UnsafeRawBufferPointer
    /// Offset of the next record.
    private(set) var offset = 0

    /// Scans `bytes`, which must stay valid while the scanner is used.
    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The record at the current offset; advances past it when it is valid.
    mutating func next() -> ScannedRecord {
        let remaining = bytes.count - offset
        if remaining == 0 { return .end }
        if remaining < RecordFraming.headerSize { return .damaged(offset: offset, damage: .truncatedHeader) }
        let length = Int(RecordFraming.load(bytes, at: offset))
        let payloadChecksum = RecordFraming.load(bytes, at: offset + 4)
        let headerChecksum = RecordFraming.load(bytes, at: offset + 8)
        let header = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 8)])
        guard CRC32C.checksum(header) == headerChecksum, length > 0, length <= RecordFraming.maxPayloadBytes else {
            return .damaged(offset: offset, damage: .badHeader)
        }
        let start = offset + RecordFraming.headerSize
        let end = start + length
        guard end <= bytes.count else { return .damaged(offset: offset, damage: .truncatedPayload(end: end)) }
        guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[start..<end])) == payloadChecksum else {
            return .damaged(offset: offset, damage: .badPayload(end: end))
        }
        offset = end
        return .record(offset: start - RecordFraming.headerSize, payload: start..<end)
    }

    /// Whether damage at `offset` looks like the torn final write of a crash rather than corruption: the record
    /// is cut off by the end of the file, or it is the last record and its payload failed its checksum, or
    /// everything from `offset` to the end of the file is zero bytes (space the file system allocated but the
    /// crash never filled). Callers only ask this for the last segment of a journal.
    func isTornTail(at offset: Int, damage: RecordDamage) -> Bool {
        switch damage {
        case .truncatedHeader, .truncatedPayload:
            return true
        case .badPayload(let end):
            return end == bytes.count || allZero(from: end)
        case .badHeader:
            return allZero(from: offset)
        }
    }

    private func allZero(from start: Int) -> Bool {
        var index = start
        while index < bytes.count {
            if bytes[index] != 0 { return false }
            index += 1
        }
        return true
    }
}
