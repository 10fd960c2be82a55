/// The parts of an HTTP request that the server handshake inspects (RFC 6455 §4.2.1).
///
/// It holds plain values and a header lookup rather than `HTTP1` types, so the handshake can be validated from any
/// request representation: the HTTP layer passes its method, version and a case-insensitive lookup.
public struct WebSocketHandshakeRequest {
    /// The request method, e.g. `GET`.
    public var method: String
    /// The HTTP version, e.g. `(1, 1)`.
    public var httpVersion: (major: Int, minor: Int)
    /// Every field line with the given name, matched case-insensitively, in order (empty when absent). Values are
    /// the raw lines: the handshake splits comma-separated lists itself.
    public var headerValues: (String) -> [String]

    /// Creates a request view from a header lookup.
    public init(method: String, httpVersion: (major: Int, minor: Int), headerValues: @escaping (String) -> [String]) {
        self.method = method
        self.httpVersion = httpVersion
        self.headerValues = headerValues
    }

    /// Creates a request view from header name/value pairs (names matched case-insensitively).
    public init(method: String, httpVersion: (major: Int, minor: Int), headers: [(name: String, value: String)]) {
        self.init(method: method, httpVersion: httpVersion) { name in
            headers.filter { HTTPFieldList.equalsIgnoringASCIICase($0.name, name) }.map(\.value)
        }
    }
}
