/// An `https://` URL as ``HTTPSClient`` fetches it: host, port and request target.
///
/// Only what a key document's address needs is accepted: the `https` scheme (any case), a DNS name or an IP literal
/// (IPv6 in brackets), an optional port, and a path with an optional query. User information (`user@`) is refused,
/// and a fragment is dropped, as RFC 9110 §4.2.4 says it is never sent.
public struct HTTPSURL: Sendable, Equatable, CustomStringConvertible {
    /// The host name or address, IPv6 literals without their brackets.
    public var host: String
    /// The TCP port (443 unless the URL names another).
    public var port: Int
    /// The request target: the path (at least `/`) and query.
    public var target: String

    /// Parses `text`, or returns `nil` when it is not an `https://` URL this client can fetch.
    public init?(_ text: String) {
        guard text.utf8.count <= 8192, !text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { return nil }
        let scheme = "https://"
        guard text.lowercased().hasPrefix(scheme) else { return nil }
        let rest = text.dropFirst(scheme.count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        var remainder = rest.dropFirst(authority.count)
        if let fragment = remainder.firstIndex(of: "#") { remainder = remainder[..<fragment] }
        target = remainder.hasPrefix("/") ? String(remainder) : "/" + remainder
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if after.isEmpty {
                port = 443
            } else {
                guard after.hasPrefix(":"), let port = Self.port(after.dropFirst()) else { return nil }
                self.port = port
            }
            guard host.contains(":") else { return nil }
        } else if let colon = authority.firstIndex(of: ":") {
            host = String(authority[..<colon])
            guard let port = Self.port(authority[authority.index(after: colon)...]) else { return nil }
            self.port = port
        } else {
            host = String(authority)
            port = 443
        }
        guard !host.isEmpty else { return nil }
    }

    /// The `Host` header: the host (bracketed when IPv6) and the port when it is not 443.
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == 443 ? name : "\(name):\(port)"
    }

    /// `https://host[:port]/target`.
    public var description: String {
        "https://\(hostHeader)\(target)"
    }

    /// Where a redirect's `Location` points: an absolute `https://` URL, or a path on this URL's host.
    public func resolving(_ location: String) -> HTTPSURL? {
        if location.hasPrefix("/"), !location.hasPrefix("//") {
            return HTTPSURL("https://\(hostHeader)\(location)")
        }
        return HTTPSURL(location)
    }

    /// A port number, 1…65535, of decimal digits only.
    private static func port(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 5, text.allSatisfy({ $0.isASCII && $0.isNumber }),
              let value = Int(text), (1...65_535).contains(value)
        else { return nil }
        return value
    }
}
