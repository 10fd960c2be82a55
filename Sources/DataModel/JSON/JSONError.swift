/// Why JSON input was rejected, with the byte offset where the problem was found.
///
/// Syntax errors follow RFC 8259 strictly; ``Reason/invalidData(_:)`` wraps violations of Firebase's data rules
/// (data-model.md §4.3, §6) found while reading data, at the offset of the value that broke them.
public struct JSONError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Byte offset from the start of the input.
    public var offset: Int
    /// What went wrong.
    public var reason: Reason

    /// Creates an error at `offset`.
    public init(offset: Int, reason: Reason) {
        self.offset = offset
        self.reason = reason
    }

    /// The kinds of JSON input errors.
    public enum Reason: Equatable, Sendable {
        /// The input ended inside a value.
        case unexpectedEnd
        /// A byte that cannot start or continue the value here.
        case unexpectedByte(UInt8)
        /// A backslash escape other than RFC 8259 §7's.
        case invalidEscape
        /// A `\u` escape encodes an unpaired UTF-16 surrogate, which a Swift string (and Firebase's UTF-8 storage)
        /// cannot hold.
        case unpairedSurrogate
        /// Bytes that are not valid UTF-8 (RFC 8259 §8.1).
        case invalidUTF8
        /// An unescaped control character (U+0000–U+001F) inside a string (RFC 8259 §7).
        case controlCharacterInString
        /// A number token that does not match RFC 8259 §6's grammar.
        case invalidNumber
        /// A number too large for a double (it would be ±Infinity, which Firebase rejects).
        case numberOutOfRange
        /// Arrays and objects nested deeper than the reader's limit.
        case nestingTooDeep(limit: Int)
        /// The input is longer than the reader's limit, in bytes.
        case inputTooLarge(limit: Int)
        /// Non-whitespace after the top-level value.
        case trailingCharacters
        /// Well-formed JSON that is not valid Firebase data.
        case invalidData(ValueError)
    }

    /// A message naming the offset.
    public var description: String {
        "Invalid JSON at byte \(offset): \(reason)"
    }
}

/// Why well-formed JSON is not valid Firebase data (data-model.md §2, §4.1, §4.3, §6).
public enum ValueError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An object key is not a valid key (names the key).
    case invalidKey(PathError)
    /// The data nests deeper than ``DataLimits/maxDepth`` counted from the root (write path plus object levels).
    case tooDeep(depth: Int)
    /// A string value longer than ``DataLimits/maxStringBytes`` UTF-8 bytes.
    case stringTooLong(byteCount: Int)
    /// A `.priority` that is not null, a number, a string or a server value (booleans and objects are invalid).
    case invalidPriority
    /// `.value` next to real children, or `.sv` next to anything but `.priority`.
    case metadataWithChildren
    /// A `.sv` placeholder other than `"timestamp"` or `{"increment": number}` (REST: "unrecognized server value").
    case unknownServerValue
    /// The same key twice in one object (JSON.stringify never produces it; we do not guess which one wins).
    case duplicateKey(String)
    /// Two paths of one multi-path update overlap (one is an ancestor of the other).
    case overlappingUpdatePaths(String, String)
    /// A server value resolved to a number outside the double range.
    case numberOutOfRange

    /// A human-readable message.
    public var description: String {
        switch self {
        case .invalidKey(let error): return error.description
        case .tooDeep(let depth): return "Data nests \(depth) levels deep; the limit is 32"
        case .stringTooLong(let count): return "String of \(count) bytes exceeds the 10 MiB limit"
        case .invalidPriority: return "Invalid priority: must be null, a number or a string"
        case .metadataWithChildren: return "'.value' or '.sv' cannot be combined with other children"
        case .unknownServerValue: return "Unrecognized server value"
        case .duplicateKey(let key): return "Duplicate key \"\(key)\""
        case .overlappingUpdatePaths(let a, let b): return "Update paths \(a) and \(b) overlap"
        case .numberOutOfRange: return "Number out of range"
        }
    }
}
