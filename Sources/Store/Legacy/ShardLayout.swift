import DataModel

/// How a namespace's tree is split into shards: by a hash of each path's first ``depth`` keys, modulo ``count``.
///
/// Every location at least ``depth`` keys deep belongs to exactly one shard (the one its first ``depth`` keys hash
/// to), together with its whole subtree. Locations shallower than ``depth`` ("wide" locations, e.g. the root) span
/// several shards; reads and writes there are coordinated across all shards (see ``Store``).
///
/// Choosing the depth: pick the shallowest depth at which the tree has many keys carrying similar load. The
/// default, 1, shards by top-level key and suits trees with many top-level keys. A tree with a few top-level
/// collections (`/users`, `/messages`, `/rooms`) puts each collection on one shard, so one busy collection uses
/// one core; depth 2 spreads `/users/<uid>` across shards instead, at the price that writes and listens at the
/// top level itself become multi-shard operations. Deeper than needed only makes more locations "wide".
///
/// The hash is FNV-1a (64-bit) over the keys' UTF-8 bytes with `0xFF` (never valid UTF-8) between keys. It must be
/// stable across runs and processes because journals are partitioned by it; Swift's `Hasher` is seeded per
/// process and cannot be used.
public struct ShardLayout: Sendable, Equatable {
    /// Number of shards, each with its own queue and journal (1...1024).
    public let count: Int
    /// Number of leading path keys that select the shard (1...16).
    public let depth: Int

    /// Largest accepted shard count.
    public static let maxCount = 1024
    /// Largest accepted shard depth.
    public static let maxDepth = 16

    /// A layout; `count` and `depth` are clamped to their valid ranges.
    public init(count: Int, depth: Int = 1) {
        self.count = min(max(count, 1), Self.maxCount)
        self.depth = min(max(depth, 1), Self.maxDepth)
    }

    /// Whether `path` is shallower than the shard depth and therefore spans shards.
    public func isWide(_ path: Path) -> Bool {
        path.depth < depth
    }

    /// The shard owning `path` and its subtree, or `nil` for a wide path.
    public func shard(for path: Path) -> Int? {
        guard path.depth >= depth else { return nil }
        return shard(forPrefix: path.keys[..<depth])
    }

    /// The shard owning `base` followed by `relative` (an update entry), or `nil` when that path is wide; the
    /// joined path is never built.
    func shard(for base: Path, appending relative: Path) -> Int? {
        if base.depth >= depth { return shard(for: base) }
        guard base.depth + relative.depth >= depth else { return nil }
        var hasher = PrefixHasher()
        for key in base.keys { hasher.add(key) }
        for key in relative.keys[..<(depth - base.depth)] { hasher.add(key) }
        return Int(hasher.value % UInt64(count))
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
