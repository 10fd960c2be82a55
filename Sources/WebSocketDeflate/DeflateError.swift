/// Failures of permessage-deflate (RFC 7692).
public enum DeflateError: Error, Equatable, Sendable {
    /// zlib reported an error.
    case zlib(code: Int32)
}
