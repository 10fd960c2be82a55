import DataModel

/// How the sharded format that preceded the namespace log split a tree: by a hash of each path's first ``depth``
/// keys, modulo ``count``. Read only to migrate such directories (``LogLoader``).
///
/// Every location at least ``depth`` keys deep belonged to exactly one shard, with its whole subtree; shallower
/// ("wide") locations spanned shards. The hash is FNV-1a (64-bit) over the keys' UTF-8 bytes with `0xFF` between
/// keys.
struct ShardLayout: Sendable, Equatable {
    /// Number of shards, each with its own queue and journal (1...1024).
    let count: Int
    /// Number of leading path keys that select the shard (1...16).
    let depth: Int

    /// Largest accepted shard count.
    static let maxCount = 1024
    /// Largest accepted shard depth.
    static let maxDepth = 16

    /// A layout; `count` and `depth` are clamped to their valid ranges.
    init(count: Int, depth: Int = 1) {
        self.count = min(max(count, 1), Self.maxCount)
        self.depth = min(max(depth, 1), Self.maxDepth)
    }

    /// The shard owning `path` and its subtree, or `nil` for a wide path.
    func shard(for path: Path) -> Int? {
        guard path.depth >= depth else { return nil }
        return shard(forPrefix: path.keys[..<depth])
    }

    /// The shard owning the subtree at the depth-`depth` location whose keys are `keys`.
    func shard(forPrefix keys: ArraySlice<Key>) -> Int {
        var hasher = PrefixHasher()
        for key in keys { hasher.add(key) }
        return Int(hasher.value % UInt64(count))
    }

    /// The shard owning the child `key` of the location `parent`, which must be one level above the shard depth.
    func shard(forChild key: Key, of parent: Path) -> Int {
        var hasher = PrefixHasher()
        for parentKey in parent.keys { hasher.add(parentKey) }
        hasher.add(key)
        return Int(hasher.value % UInt64(count))
    }
}

/// FNV-1a over keys, with `0xFF` between keys.
struct PrefixHasher {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
    private var isFirst = true
    private static let prime: UInt64 = 0x0000_0100_0000_01B3

    mutating func add(_ key: Key) {
        if !isFirst { value = (value ^ 0xFF) &* Self.prime }
        isFirst = false
        var text = key.string
        text.withUTF8 { bytes in
            for byte in bytes { value = (value ^ UInt64(byte)) &* Self.prime }
        }
    }
}
