/// Failures of the TLS layer.
public enum TLSError: Error, Equatable, Sendable {
    /// OpenSSL reported an error; the string is its error queue.
    case openSSL(String)
}
