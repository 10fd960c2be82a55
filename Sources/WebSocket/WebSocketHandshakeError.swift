/// Why an upgrade request was refused; each case maps to the HTTP response the client receives.
///
/// ``statusCode``, ``responseHeaders`` and ``message`` are the single place where handshake failures become HTTP.
public enum WebSocketHandshakeError: Error, Hashable, Sendable {
    /// The method is not GET (§4.1 item 2).
    case methodNotGet(String)
    /// The request is older than HTTP/1.1 (§4.1 item 2).
    case httpVersionTooOld
    /// No `Host` header (§4.2.1 item 2).
    case missingHost
    /// `Upgrade` does not contain the `websocket` token (§4.2.1 item 3).
    case missingUpgradeWebSocket
    /// `Connection` does not contain the `Upgrade` token (§4.2.1 item 4).
    case missingConnectionUpgrade
    /// `Sec-WebSocket-Key` is missing, repeated, or not the base64 encoding of 16 bytes (§4.2.1 item 5).
    case invalidKey
    /// `Sec-WebSocket-Version` is missing or not 13 (§4.2.1 item 6, §4.4); carries what the client sent.
    case unsupportedVersion(String?)
    /// The `Origin` is not in the allowed list (§4.2.2 item 4, §10.2); carries what the client sent.
    case originNotAllowed(String?)

    /// The HTTP status: 403 for a refused origin, 426 when the client must change its upgrade (no `websocket`
    /// upgrade token, or a version other than 13), 400 for anything else malformed.
    public var statusCode: Int {
        switch self {
        case .originNotAllowed: return 403
        case .missingUpgradeWebSocket, .unsupportedVersion: return 426
        case .methodNotGet, .httpVersionTooOld, .missingHost, .missingConnectionUpgrade, .invalidKey: return 400
        }
    }

    /// Headers the response must carry: on 426, `Upgrade: websocket` (RFC 9110 §15.5.22) and
    /// `Sec-WebSocket-Version: 13` (RFC 6455 §4.4) so the client learns what to send.
    public var responseHeaders: [(name: String, value: String)] {
        switch self {
        case .missingUpgradeWebSocket, .unsupportedVersion:
            return [("Upgrade", "websocket"), ("Sec-WebSocket-Version", WebSocketHandshake.version)]
        case .methodNotGet, .httpVersionTooOld, .missingHost, .missingConnectionUpgrade, .invalidKey,
            .originNotAllowed:
            return []
        }
    }

    /// A short human-readable explanation for the response body and the logs.
    public var message: String {
        switch self {
        case .methodNotGet: return "WebSocket upgrade requires GET"
        case .httpVersionTooOld: return "WebSocket upgrade requires HTTP/1.1 or later"
        case .missingHost: return "missing Host header"
        case .missingUpgradeWebSocket: return "expected Upgrade: websocket"
        case .missingConnectionUpgrade: return "expected Connection: Upgrade"
        case .invalidKey: return "Sec-WebSocket-Key must be the base64 encoding of 16 bytes"
        case .unsupportedVersion: return "unsupported Sec-WebSocket-Version; use 13"
        case .originNotAllowed: return "origin not allowed"
        }
    }
}
