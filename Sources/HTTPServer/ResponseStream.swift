import HTTP1
import Primitives
import Transport

/// An open streaming response (server-sent events) on one connection.
///
/// Owned by the connection's loop: call every method there (``loop``). Bytes are sent as
/// HTTP/1.1 chunks; ``finish()`` sends the last chunk and closes the connection.
public final class ResponseStream: @unchecked Sendable {
    // Owned by `loop.queue`.
    weak var owner: ServerConnection?
    /// Called once when the stream ends (peer gone, finished, or cut off as a slow consumer).
    public var onClose: (@Sendable () -> Void)?
    /// The loop that owns this stream.
    public let loop: EventLoop

    init(owner: ServerConnection) {
        self.owner = owner
        self.loop = owner.connection.loop
    }

    /// Sends `bytes` as one chunk.
    public func send(_ bytes: [UInt8]) {
        loop.assertInLoop()
        guard !bytes.isEmpty else { return }
        owner?.sendPlaintext(HTTPChunkedEncoding.encodeChunk(bytes))
    }

    /// Sends bytes already framed as one or more HTTP/1.1 chunks (shared by many streams, see
    /// ``encodeSharedChunk(_:)``).
    public func sendChunk(_ chunk: ByteChunk) {
        loop.assertInLoop()
        owner?.sendPlaintext(chunk)
    }

    /// Frames `bytes` once as an HTTP/1.1 chunk to share across streams.
    public static func encodeSharedChunk(_ bytes: [UInt8]) -> ByteChunk {
        ByteChunk(copying: HTTPChunkedEncoding.encodeChunk(bytes))
    }

    /// Writes queued output to the socket now instead of at the end of the loop's pass (for a caller that must
    /// know how much the peer has really not taken yet).
    public func flushNow() {
        loop.assertInLoop()
        owner?.connection.flushNow()
    }

    /// Closes the connection at once, dropping unsent output (a consumer too far behind).
    public func cutOff() {
        loop.assertInLoop()
        owner?.connection.close(reason: .slowConsumer)
    }

    /// Unwritten outbound bytes on the connection.
    public var pendingOutboundBytes: Int { owner?.connection.pendingOutboundBytes ?? 0 }

    /// Ends the response and closes the connection once the bytes are out.
    public func finish() {
        loop.assertInLoop()
        owner?.sendPlaintext(HTTPChunkedEncoding.lastChunk)
        owner?.closeAfterFlush(reason: .local("stream finished"))
    }

    /// Whether the stream has ended.
    public var isClosed: Bool { owner?.connection.isClosed ?? true }
}
