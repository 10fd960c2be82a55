/// A growable byte buffer with a read cursor, for parsers that receive bytes in arbitrary pieces.
///
/// Bytes are appended at the end and consumed from the front; consumed space is reclaimed lazily
/// (when more than half the storage is dead) so that draining a pipelined stream stays O(n).
public struct ByteBuffer: Sendable {
    /// Backing storage; `storage[readerIndex...]` holds the unread bytes.
    public private(set) var storage: [UInt8]
    /// Index of the first unread byte.
    public private(set) var readerIndex: Int

    /// Creates an empty buffer with room for `capacity` bytes.
    public init(capacity: Int = 0) {
        storage = []
        storage.reserveCapacity(capacity)
        readerIndex = 0
    }

    /// Number of unread bytes.
    @inlinable public var readableCount: Int { storage.count - readerIndex }

    /// Whether no unread bytes remain.
    @inlinable public var isEmpty: Bool { readableCount == 0 }

    /// Appends bytes at the end.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compactIfWorthIt()
        storage.append(contentsOf: bytes)
    }

    /// Appends bytes at the end.
    public mutating func append(contentsOf bytes: some Sequence<UInt8>) {
        compactIfWorthIt()
        storage.append(contentsOf: bytes)
    }

    /// The byte `offset` positions after the reader index; the caller checks `offset < readableCount`.
    @inlinable public subscript(offset: Int) -> UInt8 { storage[readerIndex + offset] }

    /// Marks `count` bytes as read.
    public mutating func consume(_ count: Int) {
        precondition(count >= 0 && count <= readableCount, "consume beyond readable bytes")
        readerIndex += count
        if readerIndex == storage.count {
            storage.removeAll(keepingCapacity: true)
            readerIndex = 0
        }
    }

    /// Removes and returns the next `count` bytes.
    public mutating func read(_ count: Int) -> [UInt8] {
        let slice = Array(storage[readerIndex..<(readerIndex + count)])
        consume(count)
        return slice
    }

    /// Removes and returns every unread byte.
    public mutating func readAll() -> [UInt8] { read(readableCount) }

    /// Calls `body` with the unread bytes.
    public func withUnsafeReadableBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withUnsafeBytes { raw in
            try body(UnsafeRawBufferPointer(rebasing: raw[readerIndex...]))
        }
    }

    private mutating func compactIfWorthIt() {
        if readerIndex > 0 && readerIndex * 2 >= storage.count {
            storage.removeSubrange(0..<readerIndex)
            readerIndex = 0
        }
    }
}
