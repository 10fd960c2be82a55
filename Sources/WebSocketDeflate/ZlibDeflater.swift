import CZlib

/// A raw-DEFLATE compressor (zlib with negative window bits: no zlib header or checksum), producing one
/// permessage-deflate message per call (RFC 7692 §7.2.1).
///
/// Owns a heap-allocated `z_stream` (zlib keeps pointers into it, so it must not move). Confined to one queue.
final class ZlibDeflater {
    private let stream: UnsafeMutablePointer<z_stream>

    /// Largest input handed to zlib per call; `avail_in` is 32-bit.
    private static let maxInputPerCall = 1 << 30

    /// Creates a compressor.
    /// - Parameters:
    ///   - windowBits: LZ77 window, 9...15 (zlib's raw deflate rejects 8; see ``PerMessageDeflateParameters``).
    ///   - level: zlib compression level, 0...9.
    ///   - memoryLevel: zlib memory level, 1...9 (hash table and buffer sizes).
    ///   - strategy: A zlib strategy, normally `Z_DEFAULT_STRATEGY`.
    /// - Throws: ``DeflateError/zlib(code:)`` if zlib refuses the parameters or runs out of memory.
    init(windowBits: Int, level: Int, memoryLevel: Int, strategy: Int32) throws(DeflateError) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = CZlib_deflateInit2(
            stream, Int32(level), Z_DEFLATED, -Int32(windowBits), Int32(memoryLevel), strategy)
        guard status == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw .zlib(code: status)
        }
    }

    /// A compressor whose output a peer with a `windowBits` window (8...15) can inflate.
    ///
    /// zlib's raw deflate refuses window bits 8, so 8 becomes 9. That is still valid for a 256-byte window: zlib
    /// never emits a distance beyond its window size minus 262 (`MAX_DIST` in deflate.c), i.e. 250 bytes at 9 bits.
    static func forPeer(windowBits: Int, configuration: PerMessageDeflateConfiguration) throws(DeflateError)
        -> ZlibDeflater
    {
        try ZlibDeflater(
            windowBits: max(windowBits, 9), level: configuration.compressionLevel,
            memoryLevel: configuration.memoryLevel, strategy: Z_DEFAULT_STRATEGY)
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Compresses a whole message and ends it with a sync flush, then strips the flush's `00 00 ff ff`
    /// (RFC 7692 §7.2.1). The stream keeps its window for the next message unless ``reset()`` is called.
    func compressMessage(_ input: UnsafeRawBufferPointer) throws(DeflateError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(deflateBound(stream, UInt(input.count))) + 16)
        var produced = 0
        var consumed = 0
        while true {
            let chunk = min(input.count - consumed, Self.maxInputPerCall)
            let isLastChunk = consumed + chunk == input.count
            stream.pointee.next_in = UnsafeMutablePointer(
                mutating: input.baseAddress.map { ($0 + consumed).assumingMemoryBound(to: UInt8.self) })
            stream.pointee.avail_in = UInt32(chunk)
            // Drain this chunk; on the last one, finish with a sync flush (repeat while the output fills up).
            while true {
                if output.count - produced < 64 {
                    output.append(contentsOf: repeatElement(0, count: max(output.count, 1024)))
                }
                let room = min(output.count - produced, Int(UInt32.max))
                let status = output.withUnsafeMutableBytes { buffer -> Int32 in
                    stream.pointee.next_out = buffer.baseAddress.map { ($0 + produced).assumingMemoryBound(to: UInt8.self) }
                    stream.pointee.avail_out = UInt32(room)
                    return deflate(stream, isLastChunk ? Z_SYNC_FLUSH : Z_NO_FLUSH)
                }
                produced += room - Int(stream.pointee.avail_out)
                // Z_BUF_ERROR means "no progress possible", which with output room left means the input is used up.
                guard status == Z_OK || (status == Z_BUF_ERROR && stream.pointee.avail_in == 0) else {
                    throw .zlib(code: status)
                }
                if stream.pointee.avail_in == 0 && stream.pointee.avail_out != 0 { break }
            }
            consumed += chunk
            if isLastChunk { break }
        }
        output.removeSubrange(produced...)
        if output.count >= 4 && output[(output.count - 4)...].elementsEqual([0x00, 0x00, 0xFF, 0xFF]) {
            output.removeLast(4)
        }
        return output
    }

    /// Forgets the window, so the next message does not refer to earlier ones (no context takeover).
    func reset() {
        deflateReset(stream)
    }
}
