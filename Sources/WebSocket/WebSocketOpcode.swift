/// The frame opcodes defined by RFC 6455 §5.2; every other value is reserved and fails the connection (1002).
public enum WebSocketOpcode: UInt8, Sendable, Hashable, CaseIterable {
    /// Continues a fragmented message (§5.4).
    case continuation = 0x0
    /// First frame of a UTF-8 text message.
    case text = 0x1
    /// First frame of a binary message.
    case binary = 0x2
    /// Close (§5.5.1).
    case close = 0x8
    /// Ping (§5.5.2).
    case ping = 0x9
    /// Pong (§5.5.3).
    case pong = 0xA

    /// Whether this is a control frame opcode (high bit of the nibble set, §5.5).
    @inlinable public var isControl: Bool { rawValue & 0x8 != 0 }
}
