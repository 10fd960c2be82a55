/// Why an ``AuthConfiguration`` cannot be used; thrown once, at start, by ``TokenVerifier/init(configuration:)``.
///
/// Every case that concerns the key file names it, so the message can be shown to the operator as is.
public enum AuthConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// ``AuthConfiguration/hs256Secret`` is shorter than ``AuthConfiguration/minimumHS256SecretBytes``.
    case secretTooShort(byteCount: Int, minimum: Int)
    /// ``AuthConfiguration/adminToken`` is empty or longer than ``TokenVerifier/maxCredentialBytes``.
    case invalidAdminToken(reason: String)
    /// ``AuthConfiguration/clockSkewSeconds`` is negative or not finite.
    case invalidClockSkew(Double)
    /// ``AuthConfiguration/allowUnsignedTokens`` is set on a server that does not listen on loopback only.
    case unsignedTokensRequireLoopback
    /// The key file could not be read.
    case unreadableKeyFile(path: String, reason: String)
    /// The key file is larger than `limit` bytes (1 MiB; key files are a few KiB).
    case keyFileTooLarge(path: String, limit: Int)
    /// The key file is neither PEM, a JWKS nor a certificate map.
    case unrecognizedKeyFile(path: String, reason: String)
    /// One key in the key file is unusable; `key` says which (`PEM block 2 (CERTIFICATE)`, `JWKS key 1 (kid "a")`).
    case invalidKey(path: String, key: String, reason: String)
    /// The key file holds no RS256 or ES256 verification key.
    case noUsableKeys(path: String)
    /// jwt-kit refused to register a key that had already been parsed (not expected to happen).
    case keyRegistrationFailed(reason: String)
    /// A key URL is not an `https://` URL (or its timing settings are unusable).
    case invalidKeyURL(String)
    /// ``AuthConfiguration/firebaseProjectId`` is not a project id.
    case invalidProjectID(String)
    /// An App Check project number is not a number.
    case invalidProjectNumber(String)
    /// Settings that cannot be used together, and why.
    case conflictingSettings(String)

    /// A message for the operator.
    public var description: String {
        switch self {
        case .secretTooShort(let byteCount, let minimum):
            return "The HS256 secret is \(byteCount) bytes long; it must be at least \(minimum) bytes (RFC 7518 §3.2)."
        case .invalidAdminToken(let reason):
            return "The admin token is unusable: \(reason)."
        case .invalidClockSkew(let value):
            return "The clock skew must be a finite number of seconds, at least 0 (got \(value))."
        case .unsignedTokensRequireLoopback:
            return "Unsigned tokens may only be allowed on a server that listens on loopback addresses only."
        case .unreadableKeyFile(let path, let reason):
            return "Cannot read the key file \(path): \(reason)."
        case .keyFileTooLarge(let path, let limit):
            return "The key file \(path) is larger than \(limit) bytes."
        case .unrecognizedKeyFile(let path, let reason):
            return "The key file \(path) is not usable: \(reason)."
        case .invalidKey(let path, let key, let reason):
            return "The key file \(path) has an unusable key, \(key): \(reason)."
        case .noUsableKeys(let path):
            return "The key file \(path) holds no RS256 or ES256 verification key."
        case .keyRegistrationFailed(let reason):
            return "A verification key could not be registered: \(reason)."
        case .invalidKeyURL(let url):
            return "The key URL \(url.prefix(200)) is not usable: keys are fetched from https:// URLs only."
        case .invalidProjectID(let id):
            return "\"\(id.prefix(80))\" is not a Firebase project id (1-128 of a-z 0-9 - . : and no spaces)."
        case .invalidProjectNumber(let number):
            return "\"\(number.prefix(80))\" is not a Firebase project number (digits only)."
        case .conflictingSettings(let reason):
            return reason
        }
    }
}
