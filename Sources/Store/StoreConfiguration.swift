#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether and how a ``Store`` persists, its clock, and how it compiles rules.
public struct StoreConfiguration: Sendable {
    /// Where and how to persist; `nil` keeps everything in memory only.
    public var persistence: PersistenceConfiguration?
    /// The server clock, in milliseconds since the Unix epoch (injectable for tests). The sequencer reads it once
    /// per entry, when it gives the entry its place; nothing else in the store reads the time.
    public var clock: @Sendable () -> Double
    /// Compiles the rules revisions the log puts in force (``Store/installRules(source:completion:)``, and when
    /// replaying them); `nil` for a store whose log never holds rules.
    public var rulesCompiler: RulesCompiler?
    /// The log shared with the other nodes of a cluster: the store's driver is then a replica's, which applies that
    /// log's order (and keeps the tree in memory, ignoring ``persistence``: the log is what is durable). `nil`: a
    /// single node, whose driver is the journal's (or memory's, without ``persistence``).
    public var replication: (any ReplicatedLog)?
    /// Cluster mode: a replica hashes its tree every this many log positions and compares with the others.
    public var checkpointInterval: UInt64 = 1_000
    /// Cluster mode: called when another replica's hash at a position differs from this one's (the trees have
    /// diverged: a bug, or entries applied differently), on a store queue.
    public var divergence: (@Sendable (_ mine: Checkpoint, _ theirs: Checkpoint) -> Void)?
    /// Cluster mode: called when the log declared this node down while it runs (its armed onDisconnect writes
    /// have run everywhere); the store then proposes under a new name. The owner should close the namespace's
    /// connections so that their clients reconnect and register again. On the sequencer.
    public var declaredDown: (@Sendable () -> Void)?
    /// Cluster mode: called when the replica starts rebuilding its tree from the log, with why (the log found its
    /// entries differ from the stream leader's, or more replicas agree on another tree), on the sequencer.
    public var replicaRebuilt: (@Sendable (_ reason: String) -> Void)?
    /// Cluster mode: called with `true` once the node has been unable to reach the log for a while (it acknowledges
    /// nothing, and holds its reads until it has caught up again), and with `false` when it reaches the log again.
    /// The owner should tell the namespace's clients that can safely go elsewhere. On the sequencer.
    public var cutOff: (@Sendable (_ cutOff: Bool) -> Void)?
    /// Hears what happens to the journal that an operator must know: a full disk, its recovery, a failure that
    /// stops the namespace from acknowledging writes. On the journal's queue.
    public var journalEvents: (@Sendable (JournalEvent) -> Void)?

    /// A configuration; by default in memory, with the system clock, no rules and no cluster.
    public init(persistence: PersistenceConfiguration? = nil,
                clock: @escaping @Sendable () -> Double = StoreConfiguration.systemClock,
                rulesCompiler: RulesCompiler? = nil, replication: (any ReplicatedLog)? = nil) {
        self.persistence = persistence
        self.clock = clock
        self.rulesCompiler = rulesCompiler
        self.replication = replication
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
    /// A snapshot is also taken once replaying the records appended since the last one would take this long at
    /// start-up (1 s): what bounds a start after many small writes, whose replay costs per record more than per
    /// byte (``ReplayCost``).
    public var snapshotReplaySeconds: Double = 1
    /// Truncate a corrupt journal at its last good record instead of refusing to start (`--repair`).
    public var repair = false
    /// Open without modifying any file and without taking snapshots; writes are rejected (offline export).
    public var readOnly = false
    /// Injected journal I/O errors, for tests of fault handling (`nil`: none).
    public var faults: JournalFaults?

    /// Settings for `directory` with the defaults above.
    public init(directory: String) {
        self.directory = directory
    }
}
