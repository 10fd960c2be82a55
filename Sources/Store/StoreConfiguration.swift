#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a ``Store`` is split into shards, whether and how it persists, and its clock.
public struct StoreConfiguration: Sendable {
    /// Shard count and depth (see ``ShardLayout`` for how to choose the depth).
    public var layout: ShardLayout
    /// Where and how to persist; `nil` keeps everything in memory only.
    public var persistence: PersistenceConfiguration?
    /// The server clock for `{".sv":"timestamp"}`, in milliseconds since the Unix epoch (injectable for tests).
    public var clock: @Sendable () -> Double
    /// Keep one consistent whole tree across shards (``Store/wholeTreeSnapshot``), needed by security rules that read
    /// any location; writes then take one extra lock and path copy. Off by default.
    public var tracksWholeTree = false

    /// A configuration; by default one shard per online CPU at depth 1, in memory, with the system clock.
    public init(layout: ShardLayout = ShardLayout(count: StoreConfiguration.defaultShardCount),
                persistence: PersistenceConfiguration? = nil,
                clock: @escaping @Sendable () -> Double = StoreConfiguration.systemClock) {
        self.layout = layout
        self.persistence = persistence
        self.clock = clock
    }

    /// The number of online CPUs (at least 1).
    public static var defaultShardCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    /// Wall-clock time in milliseconds since the Unix epoch (`CLOCK_REALTIME`), whole milliseconds as Firebase uses.
    public static let systemClock: @Sendable () -> Double = {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000)
    }
}

/// Persistence settings of one namespace.
public struct PersistenceConfiguration: Sendable {
    /// The namespace's own directory (see ``DataDirectory/namespaceDirectory(_:namespace:)``).
    public var directory: String
    /// When journal records are synced and writes acknowledged; default ``FsyncPolicy/always``.
    public var fsyncPolicy: FsyncPolicy = .always
    /// A journal segment is closed and a new one started past this size (64 MiB): bounds the work of one deletion
    /// and of reading one file at start-up.
    public var maxSegmentBytes: Int = 64 << 20
    /// A snapshot is taken when this many seconds passed since the last one and something was written
    /// (600 s; `nil` disables the timer). Snapshots bound start-up time: replay cost grows with the journal.
    public var snapshotIntervalSeconds: Double? = 600
    /// A snapshot is also taken once the journals grew by this many bytes since the last one (256 MiB).
    public var snapshotJournalBytes: Int = 256 << 20
    /// Truncate a corrupt journal at its last good record instead of refusing to start (`--repair`).
    public var repair = false
    /// Open without modifying any file and without taking snapshots; writes are rejected (offline export).
    public var readOnly = false

    /// Settings for `directory` with the defaults above.
    public init(directory: String) {
        self.directory = directory
    }
}
