import COpenSSL

/// A TLS protocol version, as OpenSSL numbers it (the `legacy_version` wire value, RFC 8446 §4.1.2).
public enum TLSProtocolVersion: Int32, Sendable, Comparable, CustomStringConvertible {
    /// TLS 1.0 (RFC 2246); never accepted by Canopy, listed so that read-back values can be named.
    case tls1_0 = 0x0301
    /// TLS 1.1 (RFC 4346); never accepted by Canopy (RFC 8996 deprecates it).
    case tls1_1 = 0x0302
    /// TLS 1.2 (RFC 5246); the oldest version Canopy speaks.
    case tls1_2 = 0x0303
    /// TLS 1.3 (RFC 8446).
    case tls1_3 = 0x0304

    /// Orders versions oldest first.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The usual spelling, e.g. "TLSv1.2".
    public var description: String {
        switch self {
        case .tls1_0: "TLSv1"
        case .tls1_1: "TLSv1.1"
        case .tls1_2: "TLSv1.2"
        case .tls1_3: "TLSv1.3"
        }
    }
}
