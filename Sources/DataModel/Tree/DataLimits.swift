/// Validation limits for keys, paths and values (data-model.md §6 and §11).
///
/// The defaults are Firebase's documented limits; a self-hosted deployment may change them through configuration,
/// which is why they are values rather than constants.
public struct DataLimits: Sendable, Equatable {
    /// Maximum number of path segments from the root to any stored value, counting nested object levels of written
    /// data (Firebase: 32, `MAX_PATH_DEPTH`).
    public var maxDepth: Int
    /// Maximum length of one key in UTF-8 bytes (Firebase limits page: 768).
    public var maxKeyBytes: Int
    /// Maximum length of one string value in UTF-8 bytes (Firebase SDKs: 10 MiB, `MAX_LEAF_SIZE_`).
    public var maxStringBytes: Int

    /// Creates limits; every parameter defaults to Firebase's value.
    public init(maxDepth: Int = 32, maxKeyBytes: Int = 768, maxStringBytes: Int = 10 * 1024 * 1024) {
        self.maxDepth = maxDepth
        self.maxKeyBytes = maxKeyBytes
        self.maxStringBytes = maxStringBytes
    }

    /// Firebase's documented limits.
    public static let `default` = DataLimits()
}
