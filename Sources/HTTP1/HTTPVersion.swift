/// An HTTP protocol version as it appears on the request line, such as `HTTP/1.1` (RFC 9112 §2.3).
public struct HTTPVersion: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The major version digit.
    public var major: Int
    /// The minor version digit.
    public var minor: Int

    /// Creates a version from its two digits.
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// HTTP/1.0 (RFC 1945): connections close after each response unless `Connection: keep-alive` is sent.
    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    /// HTTP/1.1 (RFC 9112): connections persist unless `Connection: close` is sent.
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)

    /// The version as written on the wire, for example `HTTP/1.1`.
    public var description: String { "HTTP/\(major).\(minor)" }
}
