import HTTP1

/// Whether a request was made by a web page of another origin: a browser says so in `Sec-Fetch-Site`, and in
/// `Origin` when that header is missing (older browsers). Programs (SDKs, curl, the Admin SDK) send neither.
///
/// The admin credential and the admin endpoints refuse such requests: otherwise any page a developer opens could
/// read every namespace or replace the rules of a server on their machine, through their browser, with the
/// emulator's well-known `owner` credential.
enum CrossSiteRequest {
    /// Whether `head` comes from another origin's page (`same-site` is another origin too: another port of
    /// `localhost` is another site's page as far as the admin surface is concerned).
    static func isCrossSite(_ head: HTTPRequestHead) -> Bool {
        if let site = head.headers["Sec-Fetch-Site"]?.lowercased() {
            return site != "same-origin" && site != "none"
        }
        guard let origin = head.headers["Origin"] else { return false }
        return !isSameOrigin(origin, host: head.headers["Host"])
    }

    /// Whether `origin` (`scheme://host[:port]`) names the server the request was sent to (its `Host` header).
    private static func isSameOrigin(_ origin: String, host: String?) -> Bool {
        guard let host, let separator = origin.firstRange(of: "://") else { return false }
        let authority = origin[separator.upperBound...]
        guard !authority.contains("/") else { return false }
        let scheme = origin[..<separator.lowerBound].lowercased()
        let defaultPort = scheme == "https" ? ":443" : scheme == "http" ? ":80" : ""
        func normalized(_ text: Substring) -> String {
            let lowered = text.lowercased()
            return lowered.hasSuffix(defaultPort) && !defaultPort.isEmpty ? String(lowered.dropLast(defaultPort.count)) : lowered
        }
        return normalized(authority) == normalized(Substring(host))
    }
}
