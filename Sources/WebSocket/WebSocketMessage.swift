/// A complete, reassembled (and decompressed) data message.
public enum WebSocketMessage: Sendable, Hashable {
    /// A text message; the bytes are valid UTF-8 (validated incrementally, RFC 6455 §8.1).
    case text([UInt8])
    /// A binary message.
    case binary([UInt8])

    /// The payload bytes.
    public var payload: [UInt8] {
        switch self {
        case .text(let bytes), .binary(let bytes): return bytes
        }
    }
}
