/// The request line and header fields of a request, with the parts a router needs split out.
public struct HTTPRequestHead: Sendable, Equatable {
    /// The method token exactly as sent (case-sensitive, RFC 9110 §9.1), for example `GET`.
    public var method: String
    /// The raw request-target from the request line, not percent-decoded (RFC 9112 §3.2).
    public var target: String
    /// The raw path: the target up to the first `?`, not percent-decoded.
    ///
    /// For the absolute form (`http://host/a?b`) this is the path after the authority, `/` when empty; for
    /// the asterisk form it is `*`; for the authority form of CONNECT it is the whole target.
    public var path: String
    /// The raw query after the first `?`, not percent-decoded; nil when the target has no `?`.
    public var query: String?
    /// The protocol version from the request line.
    public var version: HTTPVersion
    /// The header fields in the order received.
    public var headers: HTTPHeaders
    /// Whether the connection may carry another request after this one (RFC 9112 §9.3).
    ///
    /// HTTP/1.1 persists unless `Connection` lists `close`; HTTP/1.0 persists only if it lists `keep-alive`
    /// and not `close`. The server may clear it, for example after sending an error.
    public var keepAlive: Bool

    /// Creates a head, deriving ``path``, ``query`` and ``keepAlive`` from the other parts.
    public init(method: String, target: String, version: HTTPVersion = .http1_1, headers: HTTPHeaders = [:]) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        (path, query) = Self.splitTarget(target)
        keepAlive = Self.persists(version: version, headers: headers)
    }

    /// Whether a connection persists after a request with this version and these headers (RFC 9112 §9.3).
    static func persists(version: HTTPVersion, headers: HTTPHeaders) -> Bool {
        if headers.containsToken("close", in: "Connection") { return false }
        if version == .http1_0 { return headers.containsToken("keep-alive", in: "Connection") }
        return true
    }

    /// Splits a request-target into its raw path and query (RFC 9112 §3.2).
    static func splitTarget(_ target: String) -> (path: String, query: String?) {
        let bytes = target.utf8
        var pathAndQuery = target[...]
        if bytes.first != ASCII.slash && target != "*" {
            guard let afterScheme = Self.afterSchemeSeparator(target) else { return (target, nil) }
            let authorityEnd = afterScheme.utf8.firstIndex { $0 == ASCII.slash || $0 == ASCII.questionMark }
            pathAndQuery = afterScheme[(authorityEnd ?? afterScheme.endIndex)...]
        }
        guard let mark = pathAndQuery.utf8.firstIndex(of: ASCII.questionMark) else {
            return (pathAndQuery.isEmpty ? "/" : String(pathAndQuery), nil)
        }
        let path = pathAndQuery[..<mark]
        let query = pathAndQuery[pathAndQuery.utf8.index(after: mark)...]
        return (path.isEmpty ? "/" : String(path), String(query))
    }

    /// The part of an absolute-form target after `scheme://`, or nil when there is no `://`.
    static func afterSchemeSeparator(_ target: String) -> Substring? {
        let separator = "://".utf8
        let bytes = target.utf8
        var index = bytes.startIndex
        while index != bytes.endIndex {
            if bytes[index...].starts(with: separator) {
                return target[bytes.index(index, offsetBy: separator.count)...]
            }
            index = bytes.index(after: index)
        }
        return nil
    }
}
