/// An HTTP response status: a three-digit code and its reason phrase (RFC 9110 §15).
public struct HTTPStatus: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The three-digit status code, 100 through 999.
    public var code: Int
    /// The reason phrase sent after the code; clients must not rely on it (RFC 9112 §4).
    public var reasonPhrase: String

    /// Creates a status; `code` must have three digits.
    public init(code: Int, reasonPhrase: String) {
        precondition((100...999).contains(code), "HTTP status codes have three digits")
        self.code = code
        self.reasonPhrase = reasonPhrase
    }

    /// The code and phrase as on a status line, for example `404 Not Found`.
    public var description: String { "\(code) \(reasonPhrase)" }

    /// Whether responses with this status carry no content and no `Content-Length`: 1xx, 204 and 304
    /// (RFC 9110 §6.4.1, §8.6).
    public var forbidsContent: Bool { code < 200 || code == 204 || code == 304 }

    // MARK: - 1xx

    /// 100 Continue: the client may send the body it announced with `Expect: 100-continue`.
    public static let `continue` = HTTPStatus(code: 100, reasonPhrase: "Continue")
    /// 101 Switching Protocols: the reply to an accepted WebSocket upgrade.
    public static let switchingProtocols = HTTPStatus(code: 101, reasonPhrase: "Switching Protocols")

    // MARK: - 2xx

    /// 200 OK.
    public static let ok = HTTPStatus(code: 200, reasonPhrase: "OK")
    /// 201 Created.
    public static let created = HTTPStatus(code: 201, reasonPhrase: "Created")
    /// 204 No Content: success with no body and no `Content-Length`.
    public static let noContent = HTTPStatus(code: 204, reasonPhrase: "No Content")

    // MARK: - 4xx

    // MARK: - 3xx

    /// 301 Moved Permanently: the resource is at `Location` (RFC 9110 §15.4.2).
    public static let movedPermanently = HTTPStatus(code: 301, reasonPhrase: "Moved Permanently")

    /// 304 Not Modified: a conditional GET whose `If-None-Match` still matches; no content (RFC 9110 §15.4.5).
    public static let notModified = HTTPStatus(code: 304, reasonPhrase: "Not Modified")

    /// 400 Bad Request: malformed syntax or framing.
    public static let badRequest = HTTPStatus(code: 400, reasonPhrase: "Bad Request")
    /// 401 Unauthorized: missing or invalid credentials.
    public static let unauthorized = HTTPStatus(code: 401, reasonPhrase: "Unauthorized")
    /// 403 Forbidden: the credentials do not allow this request.
    public static let forbidden = HTTPStatus(code: 403, reasonPhrase: "Forbidden")
    /// 404 Not Found.
    public static let notFound = HTTPStatus(code: 404, reasonPhrase: "Not Found")
    /// 405 Method Not Allowed: the target exists but not for this method; send `Allow`.
    public static let methodNotAllowed = HTTPStatus(code: 405, reasonPhrase: "Method Not Allowed")
    /// 408 Request Timeout: the request did not arrive in time.
    public static let requestTimeout = HTTPStatus(code: 408, reasonPhrase: "Request Timeout")
    /// 411 Length Required: a body-carrying method came without `Content-Length` or chunked framing.
    public static let lengthRequired = HTTPStatus(code: 411, reasonPhrase: "Length Required")
    /// 412 Precondition Failed: a conditional request (such as `if-match`) did not hold.
    public static let preconditionFailed = HTTPStatus(code: 412, reasonPhrase: "Precondition Failed")
    /// 413 Content Too Large (named Payload Too Large before RFC 9110): the body exceeds the limit.
    public static let payloadTooLarge = HTTPStatus(code: 413, reasonPhrase: "Content Too Large")
    /// 414 URI Too Long: the request line exceeds the limit.
    public static let uriTooLong = HTTPStatus(code: 414, reasonPhrase: "URI Too Long")
    /// 417 Expectation Failed: an `Expect` value the server cannot meet.
    public static let expectationFailed = HTTPStatus(code: 417, reasonPhrase: "Expectation Failed")
    /// 426 Upgrade Required: used for WebSocket version mismatches, with `Sec-WebSocket-Version`.
    public static let upgradeRequired = HTTPStatus(code: 426, reasonPhrase: "Upgrade Required")
    /// 429 Too Many Requests.
    public static let tooManyRequests = HTTPStatus(code: 429, reasonPhrase: "Too Many Requests")
    /// 431 Request Header Fields Too Large: too many header bytes or fields.
    public static let requestHeaderFieldsTooLarge = HTTPStatus(
        code: 431, reasonPhrase: "Request Header Fields Too Large")

    // MARK: - 5xx

    /// 500 Internal Server Error: a failure that is the server's fault.
    public static let internalServerError = HTTPStatus(code: 500, reasonPhrase: "Internal Server Error")
    /// 501 Not Implemented: for example a transfer coding other than chunked.
    public static let notImplemented = HTTPStatus(code: 501, reasonPhrase: "Not Implemented")
    /// 503 Service Unavailable: for example when the connection limit is reached.
    public static let serviceUnavailable = HTTPStatus(code: 503, reasonPhrase: "Service Unavailable")
    /// 507: the server has no room to store the request's data (a full disk).
    public static let insufficientStorage = HTTPStatus(code: 507, reasonPhrase: "Insufficient Storage")
    /// 505 HTTP Version Not Supported: any version other than 1.0 and 1.1.
    public static let httpVersionNotSupported = HTTPStatus(code: 505, reasonPhrase: "HTTP Version Not Supported")
}
