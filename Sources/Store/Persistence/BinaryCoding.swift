/// Appends little-endian integers, LEB128 varints and length-prefixed UTF-8 to a byte array; the building block of
/// the journal and snapshot encodings.
struct BinaryWriter {
    /// The bytes written so far (and not yet spilled).
    var bytes: [UInt8] = []
    /// Takes the accumulated bytes once they pass ``spillThreshold`` at an entry boundary, so that a large tree can
    /// be streamed to a file without holding its whole encoding in memory; `nil` keeps everything in ``bytes``.
    var spill: ((inout [UInt8]) -> Void)?
    /// Size from which ``entryBoundary()`` spills.
    var spillThreshold = Int.max

    /// Marks a point between two encoded entries, where spilling may happen.
    mutating func entryBoundary() {
        if bytes.count >= spillThreshold, let spill { spill(&bytes) }
    }

    mutating func write(_ byte: UInt8) {
        bytes.append(byte)
    }

    /// Unsigned LEB128: 7 bits per byte, high bit set on all but the last.
    mutating func writeVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func writeVarint(_ value: Int) {
        precondition(value >= 0, "varints are unsigned")
        writeVarint(UInt64(value))
    }

    mutating func writeUInt64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func writeString(_ string: String) {
        var text = string
        text.withUTF8 { utf8 in
            writeVarint(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }
}

/// Why bytes could not be decoded; carries the offset within the decoded buffer.
struct BinaryDecodingError: Error, Sendable {
    let offset: Int
    let reason: String
}

/// Reads what ``BinaryWriter`` wrote, treating the bytes as hostile: every read is bounds-checked and throws
/// instead of trapping.
struct BinaryReader {
    private let bytes: UnsafeRawBufferPointer
    /// Offset of the next unread byte.
    private(set) var offset: Int

    init(bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    /// Whether every byte has been read.
    var isAtEnd: Bool { offset >= bytes.count }

    /// Bytes not read yet.
    var remainingCount: Int { bytes.count - offset }

    /// When positive, ``releaseConsumedBytes()`` hands the pages already read back to the system once this many
    /// bytes have been read since the last release. Only for readers over a ``MappedFile``.
    var releaseInterval = 0
    /// Offset up to which pages were released.
    private var releasedOffset = 0

    /// Releases the pages of the bytes read so far (see ``releaseInterval``); decoders call it between items.
    mutating func releaseConsumedBytes() {
        guard releaseInterval > 0, offset - releasedOffset >= releaseInterval else { return }
        MappedFile.release(UnsafeRawBufferPointer(rebasing: bytes[releasedOffset..<offset]))
        releasedOffset = offset
    }

    func failure(_ reason: String) -> BinaryDecodingError {
        BinaryDecodingError(offset: offset, reason: reason)
    }

    mutating func readByte() throws(BinaryDecodingError) -> UInt8 {
        guard offset < bytes.count else { throw failure("unexpected end of data") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readVarint() throws(BinaryDecodingError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            guard shift < 64, shift < 63 || byte <= 1 else { throw failure("varint overflows 64 bits") }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    /// A varint that must fit `limit` (an element count or byte length).
    mutating func readCount(limit: Int) throws(BinaryDecodingError) -> Int {
        let value = try readVarint()
        guard value <= UInt64(limit) else { throw failure("count \(value) exceeds \(limit)") }
        return Int(value)
    }

    mutating func readUInt64() throws(BinaryDecodingError) -> UInt64 {
        guard bytes.count - offset >= 8 else { throw failure("unexpected end of data") }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << UInt64(8 * index) }
        offset += 8
        return value
    }

    /// Skips `count` bytes (which must be there).
    mutating func skip(_ count: Int) throws(BinaryDecodingError) {
        guard count >= 0, count <= bytes.count - offset else { throw failure("length past the end") }
        offset += count
    }

    /// A length-prefixed string; invalid UTF-8 is an error, never repaired.
    mutating func readString() throws(BinaryDecodingError) -> String {
        let length = try readVarint()
        // Bounded by the bytes left after the length itself.
        guard length <= UInt64(bytes.count - offset) else { throw failure("string length \(length) past the end") }
        let count = Int(length)
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
            .assumingMemoryBound(to: UInt8.self)
        let string: String
        if slice.allSatisfy({ $0 < 0x80 }) {
            // ASCII (nearly every key and most values): valid by construction, and `String(decoding:)` is
            // specialized where the generic `String(validating:)` costs a metadata lookup per call.
            string = String(decoding: slice, as: UTF8.self)
        } else {
            guard let validated = String(validating: slice, as: UTF8.self) else { throw failure("invalid UTF-8") }
            string = validated
        }
        offset += count
        return string
    }
}
