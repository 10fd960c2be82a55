/// Failures of the TLS layer.
///
/// Every case carries text meant for logs, never for the peer. After a ``TLSSession`` throws one of the
/// session-level cases, the session is dead: the transport should send what ``TLSSession/takeCiphertext()``
/// still returns (usually a fatal alert, RFC 8446 §6.2) and then close the connection.
public enum TLSError: Error, Equatable, Sendable {
    /// OpenSSL reported an error outside the handshake (for example a record that fails authentication);
    /// the string is OpenSSL's error queue, entries joined by "; ".
    case openSSL(String)
    /// The handshake failed for a reason without a more specific case (no shared protocol version or cipher,
    /// malformed or non-TLS bytes, an alert from the peer); the string is OpenSSL's error queue.
    case handshakeFailed(String)
    /// The peer's certificate was rejected (unknown issuer, expired, wrong host name …); the string is
    /// OpenSSL's verification result, e.g. "self-signed certificate".
    case certificateVerificationFailed(String)
    /// The peer spoke plain HTTP to a TLS port; a server may answer with a plain-text 400 before closing.
    case plaintextHTTPRequest
    /// The certificate chain file could not be loaded.
    case invalidCertificateChain(path: String, reason: String)
    /// The private key file could not be loaded or does not match the certificate.
    case invalidPrivateKey(path: String, reason: String)
    /// The trusted CA file could not be loaded.
    case invalidTrustedCA(path: String, reason: String)
    /// The server name contains a NUL byte, which cannot be sent in SNI (RFC 6066 §3) or matched.
    case invalidServerName(String)
    /// Plaintext was written after ``TLSSession/close()``.
    case sessionClosed
}
