/// A complete response whose body is known up front; ``encoded()`` frames it with `Content-Length`.
///
/// For responses that stream (server-sent events, chunked output) use ``HTTPResponseHead`` instead.
public struct HTTPResponse: Sendable, Equatable {
    /// The status.
    public var status: HTTPStatus
    /// The header fields, written in order; `Content-Length` is added by ``encoded()``.
    public var headers: HTTPHeaders
    /// The body bytes. Must be empty for 1xx and 204 responses, which have no content (RFC 9110 §15.2, §15.3.5).
    public var body: [UInt8]

    /// Creates a response.
    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The response as bytes ready to write: status line, fields, a `Content-Length` and the body.
    ///
    /// `Content-Length` is added unless the headers already have `Content-Length` or `Transfer-Encoding`, or
    /// the status is 1xx or 204, which must not carry it (RFC 9110 §8.6).
    /// With `includingBody` false (the answer to `HEAD`), the fields are those of the full response, body left out.
    public func encoded(includingBody: Bool = true) -> [UInt8] {
        precondition(body.isEmpty || !status.forbidsContent, "1xx and 204 responses have no body")
        let framedByCaller = headers.contains(name: "Content-Length") || headers.contains(name: "Transfer-Encoding")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(HTTPHeadEncoding.estimatedSize(status: status, headers: headers) + 32 + body.count)
        HTTPHeadEncoding.append(
            status: status, headers: headers,
            contentLength: framedByCaller || status.forbidsContent ? nil : body.count, to: &bytes)
        bytes.append(contentsOf: ASCII.crlf)
        if includingBody { bytes.append(contentsOf: body) }
        return bytes
    }

    /// A response with a JSON body and `Content-Type: application/json; charset=utf-8`.
    ///
    /// - Parameter body: JSON text as UTF-8, already serialized.
    public static func json(status: HTTPStatus = .ok, body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json; charset=utf-8"], body: body)
    }

    /// A response with a JSON body and `Content-Type: application/json; charset=utf-8`.
    ///
    /// - Parameter body: JSON text, already serialized.
    public static func json(status: HTTPStatus = .ok, body: String) -> HTTPResponse {
        json(status: status, body: Array(body.utf8))
    }

    /// An error response with the JSON body `{"error":"message"}`, the shape the Realtime Database REST API uses.
    ///
    /// The message is escaped as a JSON string, so it may contain any text.
    public static func error(_ status: HTTPStatus, message: String) -> HTTPResponse {
        var body: [UInt8] = []
        body.reserveCapacity(message.utf8.count + 16)
        body.append(contentsOf: #"{"error":"#.utf8)
        JSONStringEscaping.appendQuoted(message, to: &body)
        body.append(0x7D)
        return json(status: status, body: body)
    }
}
