/// A reason to fail a WebSocket connection (RFC 6455 §7.1.7); each case maps to the close code the peer receives.
///
/// ``closeCode`` is the single place where failures become close codes, so the state machine, the transport and
/// the logs agree on what each failure means.
public enum WebSocketProtocolError: Error, Hashable, Sendable {
    /// RSV1, RSV2 or RSV3 set without a negotiated extension that defines it, or RSV1 on a control or continuation
    /// frame (§5.2, RFC 7692 §6.1).
    case reservedBitsSet
    /// Opcode 0x3–0x7 or 0xB–0xF (§5.2).
    case reservedOpcode(UInt8)
    /// A client frame without a mask (the server requires one) or a server frame with one (§5.1).
    case maskingRuleViolated(expectedMasked: Bool)
    /// A control frame with FIN clear (§5.5).
    case fragmentedControlFrame
    /// A control frame whose payload exceeds 125 bytes (§5.5).
    case controlFrameTooLong(payloadCount: Int)
    /// A 64-bit payload length with its most significant bit set (§5.2).
    case invalidPayloadLength
    /// A continuation frame with no fragmented message in progress (§5.4).
    case unexpectedContinuation
    /// A new text or binary frame while a fragmented message is still in progress (§5.4).
    case expectedContinuation
    /// A close frame whose payload is one byte long — too short to hold a code (§5.5.1).
    case closePayloadTooShort
    /// A close code that may not appear on the wire (see ``WebSocketCloseCode/isAllowedOnTheWire``).
    case invalidCloseCode(UInt16)
    /// A close reason that is not valid UTF-8 (§5.5.1).
    case invalidUTF8InCloseReason
    /// A text message that is not valid UTF-8 (§8.1); raised at the first byte that proves it.
    case invalidUTF8InTextMessage
    /// A frame whose payload is larger than ``WebSocketLimits/maxFrameBytes``.
    case frameTooLarge(limit: Int)
    /// A message whose (decompressed) payload is larger than ``WebSocketLimits/maxMessageBytes``.
    case messageTooLarge(limit: Int)
    /// Compressed message data that the negotiated extension cannot decode (RFC 7692 §6.2).
    case invalidCompressedData
    /// The negotiated extension failed for a reason that is ours, not the peer's (for example zlib out of memory).
    case extensionFailure(String)

    /// The close code sent to the peer when failing the connection for this error.
    public var closeCode: WebSocketCloseCode {
        switch self {
        case .reservedBitsSet, .reservedOpcode, .maskingRuleViolated, .fragmentedControlFrame, .controlFrameTooLong,
            .invalidPayloadLength, .unexpectedContinuation, .expectedContinuation, .closePayloadTooShort,
            .invalidCloseCode:
            return .protocolError
        case .invalidUTF8InCloseReason, .invalidUTF8InTextMessage, .invalidCompressedData:
            return .invalidFramePayloadData
        case .frameTooLarge, .messageTooLarge:
            return .messageTooBig
        case .extensionFailure:
            return .internalError
        }
    }

    /// A short ASCII reason for the close frame (well under the 123 bytes a close reason may use).
    public var closeReason: String {
        switch self {
        case .reservedBitsSet: return "reserved bits set"
        case .reservedOpcode(let opcode): return "reserved opcode \(opcode)"
        case .maskingRuleViolated(let expectedMasked): return expectedMasked ? "frame not masked" : "frame masked"
        case .fragmentedControlFrame: return "fragmented control frame"
        case .controlFrameTooLong: return "control frame too long"
        case .invalidPayloadLength: return "invalid payload length"
        case .unexpectedContinuation: return "unexpected continuation frame"
        case .expectedContinuation: return "expected continuation frame"
        case .closePayloadTooShort: return "close payload too short"
        case .invalidCloseCode(let code): return "invalid close code \(code)"
        case .invalidUTF8InCloseReason: return "invalid UTF-8 in close reason"
        case .invalidUTF8InTextMessage: return "invalid UTF-8 in text message"
        case .frameTooLarge(let limit): return "frame larger than \(limit) bytes"
        case .messageTooLarge(let limit): return "message larger than \(limit) bytes"
        case .invalidCompressedData: return "invalid compressed data"
        case .extensionFailure: return "extension failure"
        }
    }
}
