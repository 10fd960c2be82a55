/// A violation of RFC 6455 by the peer; each case maps to a close code.
public enum WebSocketProtocolError: Error, Equatable, Sendable {
    /// Generic protocol error (close 1002).
    case protocolError(String)
}
