/// The status line and header fields of a response whose body follows separately (server-sent events,
/// chunked output, 100 Continue, 101 Switching Protocols).
///
/// ``encoded()`` adds no framing: the caller sets `Transfer-Encoding: chunked` and writes chunks with
/// ``HTTPChunkedEncoding``, sets `Content-Length` itself, or sets `Connection: close` and ends the body by
/// closing the connection.
public struct HTTPResponseHead: Sendable, Equatable {
    /// The status.
    public var status: HTTPStatus
    /// The header fields, written in order.
    public var headers: HTTPHeaders

    /// Creates a response head.
    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = [:]) {
        self.status = status
        self.headers = headers
    }

    /// The status line, fields and the empty line that ends the head, as bytes.
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(HTTPHeadEncoding.estimatedSize(status: status, headers: headers) + 2)
        HTTPHeadEncoding.append(status: status, headers: headers, contentLength: nil, to: &bytes)
        bytes.append(contentsOf: ASCII.crlf)
        return bytes
    }
}
