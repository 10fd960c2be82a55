/// Why a request could not be parsed; each case maps to the HTTP status the peer receives.
public enum HTTPParseError: Error, Equatable, Sendable {
    /// Malformed syntax (400).
    case badRequest(String)
}
