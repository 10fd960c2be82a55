/// Why a request could not be parsed; each case maps to the HTTP status the peer receives.
///
/// After any of these the connection's framing is unreliable, so the server sends the error response
/// (``HTTPResponse/error(_:message:)`` with ``status`` and ``message``) and closes the connection.
public enum HTTPParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Malformed syntax or ambiguous framing (400); the string says what was wrong, without echoing input.
    case badRequest(String)
    /// A body-carrying method (POST, PUT, PATCH) without `Content-Length` or chunked framing (411).
    case lengthRequired
    /// The body exceeds ``HTTPLimits/maxBodyBytes`` (413).
    case payloadTooLarge
    /// The request line exceeds ``HTTPLimits/maxRequestLineBytes`` (414).
    case uriTooLong
    /// The field section or trailers exceed ``HTTPLimits/maxHeaderBytes`` or ``HTTPLimits/maxHeaderCount`` (431).
    case headersTooLarge
    /// A feature the parser does not implement, such as a transfer coding other than chunked (501).
    case notImplemented(String)
    /// An HTTP version other than 1.0 and 1.1 (505).
    case versionNotSupported

    /// The status of the error response.
    public var status: HTTPStatus {
        switch self {
        case .badRequest: .badRequest
        case .lengthRequired: .lengthRequired
        case .payloadTooLarge: .payloadTooLarge
        case .uriTooLong: .uriTooLong
        case .headersTooLarge: .requestHeaderFieldsTooLarge
        case .notImplemented: .notImplemented
        case .versionNotSupported: .httpVersionNotSupported
        }
    }

    /// A short human-readable explanation for the error response body.
    public var message: String {
        switch self {
        case .badRequest(let reason): reason
        case .lengthRequired: "a request body needs Content-Length or Transfer-Encoding: chunked"
        case .payloadTooLarge: "request body too large"
        case .uriTooLong: "request line too long"
        case .headersTooLarge: "request header fields too large"
        case .notImplemented(let feature): feature
        case .versionNotSupported: "only HTTP/1.0 and HTTP/1.1 are supported"
        }
    }

    /// The status and message, for logs.
    public var description: String { "\(status.code) \(message)" }
}
