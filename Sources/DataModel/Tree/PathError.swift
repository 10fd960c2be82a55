/// Why a key or a path is invalid (data-model.md §2).
///
/// Every case names the offending key so that error messages sent to clients (and logged) point at the exact
/// segment. Keys longer than ``DataLimits/maxKeyBytes`` are reported by byte count, with the key truncated to its
/// first 64 characters in ``description`` only.
public enum PathError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A key is the empty string (only possible when a key is built directly, never from a split path).
    case emptyKey
    /// A key contains one of `.` `$` `#` `[` `]` `/` or an ASCII control character (U+0000–U+001F, U+007F).
    case invalidKey(String)
    /// A key is longer than the configured maximum, in UTF-8 bytes (default 768).
    case keyTooLong(String, byteCount: Int)
    /// A path (or a path plus the depth of the data written at it) has more segments than allowed (default 32).
    case tooDeep(depth: Int)

    /// A human-readable message naming the offending key.
    public var description: String {
        switch self {
        case .emptyKey:
            return "Invalid key: keys must be non-empty strings"
        case .invalidKey(let key):
            return "Invalid key \"\(key)\": keys must not contain '.', '#', '$', '[', ']', '/' or control characters"
        case .keyTooLong(let key, let byteCount):
            return "Key \"\(key.prefix(64))…\" is \(byteCount) bytes long; the limit is \(DataLimits.default.maxKeyBytes)"
        case .tooDeep(let depth):
            return "Path depth \(depth) exceeds the limit of \(DataLimits.default.maxDepth) segments"
        }
    }
}
