/// One WebSocket frame with its payload already unmasked (RFC 6455 §5.2).
///
/// The connection state machine parses frames straight into message buffers and never materializes this type on the
/// hot path; it exists for encoding arbitrary frames (tests, fuzz seeds, clients that fragment) and for readable
/// test expectations.
public struct WebSocketFrame: Sendable, Hashable {
    /// Final fragment of a message.
    public var fin: Bool
    /// Reserved bit 1; set on the first frame of a compressed message when permessage-deflate is in use (RFC 7692 §6).
    public var rsv1: Bool
    /// Reserved bit 2; no negotiated extension uses it.
    public var rsv2: Bool
    /// Reserved bit 3; no negotiated extension uses it.
    public var rsv3: Bool
    /// The frame's opcode.
    public var opcode: WebSocketOpcode
    /// Masking key applied on the wire; `nil` for unmasked frames. Clients must mask, servers must not (§5.1).
    public var maskingKey: WebSocketMaskingKey?
    /// Application (or extension) data, unmasked.
    public var payload: [UInt8]

    /// Creates a frame; defaults describe a final, unmasked frame without reserved bits.
    public init(
        fin: Bool = true, rsv1: Bool = false, rsv2: Bool = false, rsv3: Bool = false, opcode: WebSocketOpcode,
        maskingKey: WebSocketMaskingKey? = nil, payload: [UInt8] = []
    ) {
        self.fin = fin
        self.rsv1 = rsv1
        self.rsv2 = rsv2
        self.rsv3 = rsv3
        self.opcode = opcode
        self.maskingKey = maskingKey
        self.payload = payload
    }
}
