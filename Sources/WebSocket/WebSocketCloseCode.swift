/// A close status code (RFC 6455 §7.4).
///
/// Any `UInt16` can be represented (a peer may send anything), and ``isAllowedOnTheWire`` says whether a received
/// code is acceptable. Integer literals work: `close(code: 1001, reason: "shutting down")`.
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, ExpressibleByIntegerLiteral,
    CustomStringConvertible
{
    /// The numeric code.
    public var rawValue: UInt16

    /// Wraps a numeric code.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Wraps an integer literal.
    public init(integerLiteral value: UInt16) { self.rawValue = value }

    /// 1000: the purpose of the connection has been fulfilled.
    public static let normalClosure: WebSocketCloseCode = 1000
    /// 1001: the endpoint is going away (server shutdown, page navigation).
    public static let goingAway: WebSocketCloseCode = 1001
    /// 1002: the peer violated the protocol.
    public static let protocolError: WebSocketCloseCode = 1002
    /// 1003: the endpoint received a type of data it cannot accept.
    public static let unsupportedData: WebSocketCloseCode = 1003
    /// 1005: reserved — stands for "no code was present" and must never be sent.
    public static let noStatusReceived: WebSocketCloseCode = 1005
    /// 1006: reserved — stands for "closed without a close frame" and must never be sent.
    public static let abnormalClosure: WebSocketCloseCode = 1006
    /// 1007: message data inconsistent with its type (invalid UTF-8 in a text message or close reason).
    public static let invalidFramePayloadData: WebSocketCloseCode = 1007
    /// 1008: a policy was violated (used for slow consumers and rejected authentication).
    public static let policyViolation: WebSocketCloseCode = 1008
    /// 1009: a message is too big to process.
    public static let messageTooBig: WebSocketCloseCode = 1009
    /// 1010: (client only) the server did not negotiate a required extension.
    public static let mandatoryExtension: WebSocketCloseCode = 1010
    /// 1011: the server hit an unexpected condition.
    public static let internalError: WebSocketCloseCode = 1011
    /// 1012: the service is restarting (IANA registry).
    public static let serviceRestart: WebSocketCloseCode = 1012
    /// 1013: try again later, e.g. temporary overload (IANA registry).
    public static let tryAgainLater: WebSocketCloseCode = 1013

    /// Whether a peer may put this code in a close frame.
    ///
    /// Allowed: 1000–1003 and 1007–1011 (RFC 6455 §7.4.1), 1012–1014 (registered later in the IANA "WebSocket Close
    /// Code Number Registry"), and 3000–4999 (libraries, frameworks and applications, §7.4.2). Everything else —
    /// below 1000, 1004 (reserved), 1005/1006/1015 (never sent on the wire), the unassigned rest of 1016–2999 and
    /// 5000 and above — fails the connection with 1002.
    public var isAllowedOnTheWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }

    /// The decimal code.
    public var description: String { String(rawValue) }
}
