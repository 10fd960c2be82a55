import CZlib
import WebSocket

/// A raw-DEFLATE decompressor for permessage-deflate messages (RFC 7692 §7.2.2), fed piece by piece and bounded
/// in output.
///
/// Owns a heap-allocated `z_stream` (zlib keeps pointers into it, so it must not move). Confined to one queue.
final class ZlibInflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private let windowBits: Int
    /// Set when the peer ended a DEFLATE stream (a block with BFINAL) inside the current message; the rest of the
    /// message, including the appended `00 00 ff ff`, is then ignored (RFC 7692 §7.2.3.4).
    private var streamEnded = false

    /// Output is produced through a stack buffer of this size, then appended to the message.
    private let outputChunkBytes: Int
    /// Largest input handed to zlib per call; `avail_in` is 32-bit.
    private static let maxInputPerCall = 1 << 30
    /// The empty stored block a sender's sync flush ends with, removed by the sender and re-appended here.
    private static let flushTail = UInt32(bigEndian: 0x0000_FFFF)  // bytes 00 00 ff ff in memory

    /// Creates a decompressor with a `windowBits` window (8...15); it must be at least the peer's compression window.
    /// - Parameter outputChunkBytes: Size of the stack buffer output passes through (16 KiB). zlib resolves
    ///   back-references from that buffer as well as from its window, so tests shrink it to 1 to make the window
    ///   size observable.
    /// - Throws: ``DeflateError/zlib(code:)`` if zlib refuses the parameters or runs out of memory.
    init(windowBits: Int, outputChunkBytes: Int = 16 * 1024) throws(DeflateError) {
        self.windowBits = windowBits
        self.outputChunkBytes = outputChunkBytes
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = CZlib_inflateInit2(stream, -Int32(windowBits))
        guard status == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw .zlib(code: status)
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Decompresses the next piece of a message and appends it to `output`, never letting `output` grow beyond
    /// `maxOutputCount` bytes; with `isFinal`, first appends the stripped flush tail (RFC 7692 §7.2.2).
    func inflate(
        _ input: UnsafeRawBufferPointer, isFinal: Bool, into output: inout [UInt8], maxOutputCount: Int
    ) throws(WebSocketProtocolError) {
        if let failure = inflatePiece(input, into: &output, maxOutputCount: maxOutputCount) { throw failure }
        if isFinal {
            var tail = Self.flushTail
            let failure = withUnsafeBytes(of: &tail) { inflatePiece($0, into: &output, maxOutputCount: maxOutputCount) }
            if let failure { throw failure }
        }
    }

    /// Ends the current message. With context takeover the window is kept for the next message, even if the peer
    /// ended its DEFLATE stream (then the window is carried over by hand); without, the caller discards this object.
    func finishMessage() throws(WebSocketProtocolError) {
        guard streamEnded else { return }
        streamEnded = false
        // The stream is finished; restart it with the old window as a preset dictionary.
        var dictionary = [UInt8](repeating: 0, count: 1 << windowBits)
        var length: UInt32 = 0
        let status = dictionary.withUnsafeMutableBufferPointer { buffer in
            inflateGetDictionary(stream, buffer.baseAddress, &length)
        }
        guard status == Z_OK, inflateReset(stream) == Z_OK else { throw .extensionFailure("inflate reset failed") }
        let setStatus = dictionary.withUnsafeBufferPointer { buffer in
            inflateSetDictionary(stream, buffer.baseAddress, length)
        }
        guard setStatus == Z_OK else { throw .extensionFailure("inflate dictionary failed") }
    }

    /// Inflates `input` into `output`; returns the failure instead of throwing so it can run inside closures.
    private func inflatePiece(
        _ input: UnsafeRawBufferPointer, into output: inout [UInt8], maxOutputCount: Int
    ) -> WebSocketProtocolError? {
        guard !streamEnded else { return nil }
        var consumed = 0
        var failure: WebSocketProtocolError?
        withUnsafeTemporaryAllocation(byteCount: outputChunkBytes, alignment: 1) { scratch in
            repeat {
                let chunk = min(input.count - consumed, Self.maxInputPerCall)
                stream.pointee.next_in = UnsafeMutablePointer(
                    mutating: input.baseAddress.map { ($0 + consumed).assumingMemoryBound(to: UInt8.self) })
                stream.pointee.avail_in = UInt32(chunk)
                while true {
                    stream.pointee.next_out = scratch.baseAddress?.assumingMemoryBound(to: UInt8.self)
                    stream.pointee.avail_out = UInt32(outputChunkBytes)
                    let status = CZlib.inflate(stream, Z_NO_FLUSH)
                    let produced = outputChunkBytes - Int(stream.pointee.avail_out)
                    if produced > 0 {
                        guard produced <= maxOutputCount - output.count else {
                            failure = .messageTooLarge(limit: maxOutputCount)
                            return
                        }
                        output.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<produced]))
                    }
                    switch status {
                    case Z_OK:
                        // Output space ran out: there may be more; otherwise this chunk is used up.
                        if stream.pointee.avail_out == 0 || stream.pointee.avail_in > 0 { continue }
                    case Z_BUF_ERROR:
                        break  // no progress possible: input used up
                    case Z_STREAM_END:
                        streamEnded = true
                        return
                    case Z_MEM_ERROR:
                        failure = .extensionFailure("inflate out of memory")
                        return
                    default:
                        failure = .invalidCompressedData  // Z_DATA_ERROR, Z_NEED_DICT, Z_STREAM_ERROR
                        return
                    }
                    break
                }
                consumed += chunk
            } while consumed < input.count
        }
        return failure
    }
}
