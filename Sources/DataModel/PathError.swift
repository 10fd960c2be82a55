/// Why a path or key is invalid.
public enum PathError: Error, Equatable, Sendable {
    /// A key contains a forbidden character.
    case invalidKey(String)
}
