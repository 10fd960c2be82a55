import Primitives

/// A normalized location in the tree: a sequence of validated keys (data-model.md §2.3).
///
/// `"/a//b/"`, `"a/b"` and `"/a/b"` are the same path; `""` and `"/"` are the root. The canonical text form is `"/"`
/// for the root and `"/k1/k2"` otherwise. Paths order like the SDK's `pathCompare`: key by key in key order, then a
/// prefix before its extensions.
public struct Path: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The segments from the root down.
    public private(set) var keys: [Key]

    /// The root path.
    public static let root = Path(keys: [])

    /// Wraps already validated keys; the depth limit is checked where data is written, not here.
    public init(keys: [Key]) {
        self.keys = keys
    }

    /// Parses and validates a slash-separated path.
    ///
    /// Empty segments are dropped. Every segment must be a valid key (so `.priority` is rejected here; use
    /// ``WriteTarget/init(parsing:limits:)`` for paths that may address a priority).
    /// - Throws: the ``PathError`` of the first bad segment, or ``PathError/tooDeep(depth:)`` past `limits.maxDepth`.
    public init(_ string: String, limits: DataLimits = .default) throws(PathError) {
        keys = try string.withUTF8Bytes { Path.keys(ofUTF8: $0, limits: limits) }.get()
    }

    /// Parses and validates a slash-separated path from its UTF-8 bytes, as ``init(_:limits:)`` does its text,
    /// without making a `String` of the whole path first: for a message's path, read by the thousand a second.
    ///
    /// `nil` when the bytes are not valid UTF-8 or not a valid path; ``init(_:limits:)`` tells why.
    public init?(validatingUTF8 bytes: UnsafeRawBufferPointer, limits: DataLimits = .default) {
        guard UTF8Validator.isValid(bytes),
              case .success(let keys) = Path.keys(ofUTF8: bytes.assumingMemoryBound(to: UInt8.self), limits: limits)
        else { return nil }
        self.keys = keys
    }

    /// The keys of a path written in valid UTF-8, key by key from the bytes (empty segments dropped), or the error
    /// of its first bad segment, then ``PathError/tooDeep(depth:)`` past `limits.maxDepth`: the one parser behind
    /// both initializers.
    private static func keys(ofUTF8 text: UnsafeBufferPointer<UInt8>, limits: DataLimits) -> Result<[Key], PathError> {
        var keys: [Key] = []
        var start = 0
        for index in 0...text.count where index == text.count || text[index] == UInt8(ascii: "/") {
            defer { start = index + 1 }
            guard index > start else { continue }
            let segment = UnsafeBufferPointer(rebasing: text[start..<index])
            if let error = Key.validationError(segment, limits: limits) { return .failure(error) }
            keys.append(Key(unchecked: String(decoding: segment, as: UTF8.self)))
        }
        if keys.count > limits.maxDepth { return .failure(.tooDeep(depth: keys.count)) }
        return .success(keys)
    }

    /// Whether this is the root.
    public var isRoot: Bool { keys.isEmpty }
    /// Number of segments (0 for the root).
    public var depth: Int { keys.count }
    /// The first segment, `nil` for the root.
    public var firstKey: Key? { keys.first }
    /// The last segment, `nil` for the root.
    public var lastKey: Key? { keys.last }

    /// The parent path, `nil` for the root.
    public var parent: Path? {
        keys.isEmpty ? nil : Path(keys: Array(keys.dropLast()))
    }

    /// This path extended by one key.
    public func child(_ key: Key) -> Path {
        Path(keys: keys + [key])
    }

    /// This path extended by `other`.
    public func appending(_ other: Path) -> Path {
        Path(keys: keys + other.keys)
    }

    /// The path without its first `count` segments.
    public func dropFirst(_ count: Int = 1) -> Path {
        Path(keys: Array(keys.dropFirst(count)))
    }

    /// Whether `self` is `other` or one of its ancestors.
    public func contains(_ other: Path) -> Bool {
        other.keys.count >= keys.count && zip(keys, other.keys).allSatisfy { $0 == $1 }
    }

    /// `other` relative to `self` when `self` contains it, else `nil`.
    public func relativePath(to other: Path) -> Path? {
        contains(other) ? other.dropFirst(keys.count) : nil
    }

    /// Key-by-key key order, then shorter first (the SDK's `pathCompare`).
    public static func < (lhs: Path, rhs: Path) -> Bool {
        for (left, right) in zip(lhs.keys, rhs.keys) where left != right {
            return left < right
        }
        return lhs.keys.count < rhs.keys.count
    }

    /// The canonical form: `"/"` or `"/k1/k2"`.
    public var description: String {
        keys.isEmpty ? "/" : keys.reduce(into: "") { text, key in text += "/" + key.string }
    }
}
