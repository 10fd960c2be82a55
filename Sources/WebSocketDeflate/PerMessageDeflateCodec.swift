import WebSocket

/// The permessage-deflate codec of one connection (RFC 7692 §6–§7), for either role.
///
/// zlib streams are created on first use. A direction without context takeover releases its stream after every
/// message, so an idle connection holds no zlib memory; a direction with context takeover keeps its stream (and
/// window) for the connection's lifetime, as §7.1.1 requires.
///
/// Inflated output is capped by the state machine's `maxOutputCount` (``WebSocket/WebSocketLimits/maxMessageBytes``)
/// as it is produced, so a small frame cannot expand into gigabytes: the connection fails with 1009 as soon as the
/// cap is crossed.
///
/// Confined to the connection's queue, like the state machine that holds it.
public final class PerMessageDeflateCodec: WebSocketMessageCodec {
    /// Which end this codec runs on; decides which parameters govern each direction.
    public let role: WebSocketConnectionStateMachine.Role
    /// The negotiated parameters.
    public let parameters: PerMessageDeflateParameters
    /// zlib settings and the compression threshold.
    public let configuration: PerMessageDeflateConfiguration

    private var deflater: ZlibDeflater?
    private var inflater: ZlibInflater?

    /// Creates a codec from negotiated parameters.
    public init(
        role: WebSocketConnectionStateMachine.Role, parameters: PerMessageDeflateParameters,
        configuration: PerMessageDeflateConfiguration = .init()
    ) {
        self.role = role
        self.parameters = parameters
        self.configuration = configuration
    }

    /// The window size for which this connection can take a broadcast compressed once by
    /// ``PerMessageDeflateSharedCompressor``, or `nil` when its outbound direction uses context takeover (then only
    /// ``encode(_:)`` produces valid frames for it).
    public var sharedCompressionWindowBits: Int? {
        role == .server && parameters.serverNoContextTakeover ? parameters.serverMaxWindowBits : nil
    }

    private var outboundWindowBits: Int {
        role == .server ? parameters.serverMaxWindowBits : parameters.clientMaxWindowBits
    }
    private var outboundNoContextTakeover: Bool {
        role == .server ? parameters.serverNoContextTakeover : parameters.clientNoContextTakeover
    }
    /// The inflate window: the peer's negotiated window, but at least 9. zlib's manual advises inflating with 9
    /// when a peer's deflate was asked for 8, because zlib's deflate silently uses 9 then; a larger inflate window is
    /// always safe.
    private var inboundWindowBits: Int {
        max(role == .server ? parameters.clientMaxWindowBits : parameters.serverMaxWindowBits, 9)
    }
    private var inboundNoContextTakeover: Bool {
        role == .server ? parameters.clientNoContextTakeover : parameters.serverNoContextTakeover
    }

    /// Inflates the next piece of a compressed message (RFC 7692 §7.2.2).
    public func decode(
        _ input: UnsafeRawBufferPointer, isFinal: Bool, into output: inout [UInt8], maxOutputCount: Int
    ) throws(WebSocketProtocolError) {
        let inflater: ZlibInflater
        if let existing = self.inflater {
            inflater = existing
        } else {
            do {
                inflater = try ZlibInflater(windowBits: inboundWindowBits)
            } catch {
                throw .extensionFailure("zlib inflateInit2 failed")
            }
            self.inflater = inflater
        }
        try inflater.inflate(input, isFinal: isFinal, into: &output, maxOutputCount: maxOutputCount)
        if isFinal {
            if inboundNoContextTakeover {
                self.inflater = nil
            } else {
                try inflater.finishMessage()
            }
        }
    }

    /// Compresses a whole outbound message (RFC 7692 §7.2.1), or returns `nil` to send it uncompressed: below the
    /// threshold, on a zlib failure, or — without context takeover — when compression would not make it smaller.
    ///
    /// With context takeover the compressed form is always used, because the compressor's window now includes the
    /// message and the peer's decompressor must see it too.
    public func encode(_ payload: UnsafeRawBufferPointer) -> [UInt8]? {
        guard payload.count >= configuration.compressionThreshold else { return nil }
        do {
            let deflater =
                try self.deflater ?? ZlibDeflater.forPeer(windowBits: outboundWindowBits, configuration: configuration)
            let compressed = try deflater.compressMessage(payload)
            if outboundNoContextTakeover {
                self.deflater = nil
                return compressed.count < payload.count ? compressed : nil
            }
            self.deflater = deflater
            return compressed
        } catch {
            // Dropping the stream is always safe: a fresh compressor refers to less history than the peer holds.
            self.deflater = nil
            return nil
        }
    }
}
