/// A parsed `ws://` or `wss://` URL: where to connect and what to ask for in the upgrade request; or a `redis://`
/// or `nats://` URL of a peer server spoken to on plain TCP.
public struct ServerURL: Sendable, Equatable {
    /// Whether the connection is TLS (`wss`).
    public let secure: Bool
    /// The scheme of a plain-TCP peer (`redis`, `nats`), nil for WebSocket.
    public let plainTCPScheme: String?
    /// The host as written (a name or an address literal, without IPv6 brackets).
    public let host: String
    /// The TCP port (default 80 for `ws`, 443 for `wss`).
    public let port: Int
    /// The request target: path and query, `/` when the URL has none.
    public let target: String
    /// Whether the URL named a path (anything other than an empty path or `/`).
    public let hasPath: Bool

    /// Parses `ws[s]://HOST[:PORT][/PATH[?QUERY]]`; throws for anything else (user info, fragments, bad ports).
    public init(_ text: String) throws(BenchConfigurationError) {
        let rest: Substring
        var defaultPort = 80
        plainTCPScheme = ["redis", "nats"].first { text.hasPrefix($0 + "://") }
        if let scheme = plainTCPScheme {
            secure = false
            rest = text.dropFirst(scheme.count + 3)
            defaultPort = scheme == "redis" ? 6379 : 4222
        } else if text.hasPrefix("ws://") {
            secure = false
            rest = text.dropFirst(5)
        } else if text.hasPrefix("wss://") {
            secure = true
            rest = text.dropFirst(6)
            defaultPort = 443
        } else {
            throw BenchConfigurationError("--url must start with ws://, wss://, redis:// or nats://, got \(text)")
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        var path = String(rest.dropFirst(authority.count))
        guard !authority.contains("@"), !path.contains("#") else {
            throw BenchConfigurationError("--url must not carry user info or a fragment: \(text)")
        }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw BenchConfigurationError("bad host in \(text)")
            }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty {
                throw BenchConfigurationError("bad host in \(text)")
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw BenchConfigurationError("no host in \(text)") }
        if let portText {
            guard let port = Int(portText), (1...65535).contains(port) else {
                throw BenchConfigurationError("bad port in \(text)")
            }
            self.port = port
        } else {
            port = defaultPort
        }
        self.host = String(host)
        hasPath = !(path.isEmpty || path == "/")
        if path.isEmpty || path.hasPrefix("?") { path = "/" + path }
        target = path
    }

    /// The `Host` header value (RFC 9110 §7.2): the port only when it is not the scheme's default.
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? name : "\(name):\(port)"
    }

    /// The matching `http[s]://HOST:PORT` origin, for REST requests and metrics on the same server.
    public var httpOrigin: String {
        "\(secure ? "https" : "http")://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }
}
