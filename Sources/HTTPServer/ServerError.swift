/// Failures starting or running the HTTP server.
public enum ServerError: Error, Sendable {
    /// The configuration is invalid.
    case invalidConfiguration(String)
}
