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

    /// Parameters with nothing set.
    public init() {}

    /// Reads the query string of the upgrade request's target (the part after `?`, without it).
    public init(query: String) {
        for pair in query.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = Self.percentDecoded(parts[0])
            let value = parts.count > 1 ? Self.percentDecoded(parts[1]) : ""
            switch name.utf8.allSatisfy({ $0 < 0x80 }) ? name : "" {
            case "v": version = value
            case "ns": namespace = value.isEmpty ? nil : value
            case "ls": lastSessionID = value
            case "p": appID = value
            case "ac": appCheckToken = value
            case "s": transportSessionID = value
            default: break
            }
        }
    }

    /// `%XX` escapes decoded (RFC 3986 §2.1); malformed escapes are kept as they are, invalid UTF-8 is replaced.
    static func percentDecoded(_ bytes: Substring.UTF8View.SubSequence) -> String {
        guard bytes.contains(UInt8(ascii: "%")) else { return String(Substring(bytes)) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"),
                let high = bytes.index(index, offsetBy: 1, limitedBy: bytes.endIndex), high < bytes.endIndex,
                let low = bytes.index(index, offsetBy: 2, limitedBy: bytes.endIndex), low < bytes.endIndex,
                let highValue = hexValue(bytes[high]), let lowValue = hexValue(bytes[low])
            {
                decoded.append(highValue << 4 | lowValue)
                index = bytes.index(after: low)
            } else {
                decoded.append(byte)
                index = bytes.index(after: index)
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
