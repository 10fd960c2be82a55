import Primitives

/// The query parameters of a realtime connection URL, `/.ws?v=5&ns=…` (wire-protocol.md §1.2).
///
/// The SDKs put the parameters in different orders (JS `v, r, s, ls, ac, p, ns`; Android `ns, v[, ls]`; iOS
/// `v, ns[, ls]`) and JS does not URL-encode them, so they are read order-independently and percent-decoded where
/// encoded. Unknown parameters (such as JS's `r=f`) are ignored; a repeated parameter keeps its last value.
public struct ConnectionParameters: Sendable, Equatable {
    /// `v`: the protocol version; current SDKs always send `"5"`.
    public var version: String?
    /// `ns`: the database namespace; `nil` when missing or empty (JS against `http://localhost:9000` without
    /// `?ns=`), meaning the configured default namespace.
    public var namespace: String?
    /// `ls`: the session id of this client's previous connection (the `s` of that hello), sent on reconnects.
    public var lastSessionID: String?
    /// `p`: the Firebase App ID (JS); informational.
    public var appID: String?
    /// `ac`: an App Check token (browser JS; the others use the `X-Firebase-AppCheck` header).
    public var appCheckToken: String?
    /// `s`: the long-poll session being upgraded (browser JS with long polling only).
    public var transportSessionID: String?
    /// `coalesce` (a Canopy extension, milliseconds): send each listen at most one push per interval, its latest
    /// data, instead of every change (a console watching a busy namespace).
    public var coalesceMilliseconds: Int?

    /// Parameters with nothing set.
    public init() {}

    /// Reads the query string of the upgrade request's target (the part after `?`, without it).
    public init(query: String) {
        for pair in query.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = PercentDecoding.decode(parts[0])
            let value = parts.count > 1 ? PercentDecoding.decode(parts[1]) : ""
            switch name.utf8.allSatisfy({ $0 < 0x80 }) ? name : "" {
            case "v": version = value
            case "ns": namespace = value.isEmpty ? nil : value
            case "ls": lastSessionID = value
            case "p": appID = value
            case "ac": appCheckToken = value
            case "s": transportSessionID = value
            case "coalesce": coalesceMilliseconds = Int(value)
            default: break
            }
        }
    }
}
