/// An immutable run of bytes at a stable address, shareable across queues.
///
/// Fan-out encodes a frame once into a `ByteChunk` and hands the same chunk to every subscriber's
/// connection; the transport points `writev` iovecs straight at ``baseAddress`` without copying.
/// The memory is allocated once and freed when the last reference goes away.
public final class ByteChunk: @unchecked Sendable {
    // Immutable after `init`, hence safe to share (the `@unchecked` covers the raw pointer).

    /// Start of the bytes; valid for the lifetime of the chunk.
    public let baseAddress: UnsafeRawPointer
    /// Number of bytes.
    public let count: Int

    /// Copies `bytes` into a new chunk.
    public convenience init(copying bytes: some Collection<UInt8>) {
        let count = bytes.count
        self.init(capacity: count) { buffer in
            _ = buffer.initialize(from: bytes)
            return count
        }
    }

    /// Copies a raw buffer into a new chunk.
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(capacity: bytes.count) { buffer in
            if let base = bytes.baseAddress, bytes.count > 0 {
                UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: base, byteCount: bytes.count)
            }
            return bytes.count
        }
    }

    /// Allocates `capacity` bytes and lets `fill` write into them; `fill` returns how many it wrote.
    public init(capacity: Int, fill: (UnsafeMutableBufferPointer<UInt8>) throws -> Int) rethrows {
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: max(capacity, 1))
        let written: Int
        do {
            written = try fill(UnsafeMutableBufferPointer(start: storage, count: capacity))
        } catch {
            storage.deallocate()
            throw error
        }
        precondition(written >= 0 && written <= capacity, "ByteChunk fill wrote outside its capacity")
        self.baseAddress = UnsafeRawPointer(storage)
        self.count = written
    }

    deinit {
        UnsafeMutableRawPointer(mutating: baseAddress).deallocate()
    }

    /// The bytes as a buffer, valid while the chunk is alive.
    public var bytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: baseAddress, count: count)
    }

    /// A copy of the bytes as an array (for tests and slow paths).
    public var array: [UInt8] { Array(bytes) }
}
