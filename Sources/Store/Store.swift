import DataModel
import Dispatch
import Synchronization

/// One namespace's tree: sharded, with atomic writes, compare-and-set, change records and durable persistence.
///
/// - **Shards.** The tree is split by ``ShardLayout``; each shard is owned by one serial queue (``Shard``) and
///   applies the writes that touch only its own locations without any lock shared with other shards.
/// - **Multi-shard operations.** Writes at wide paths (shallower than the shard depth) or spanning shards, and
///   reads at wide paths, are enqueued on every shard involved while holding one submission lock, which gives
///   them one global order. A write holds its shards (they park later tasks), is planned from their captured
///   states, then commits on each. A reader therefore never sees part of a multi-shard write, and a wide read is
///   a consistent cut.
/// - **Order.** Tasks submitted from one thread run in submission order on each shard, so writes to a location
///   apply, and are reported, in the order they were submitted; a write's completion runs after it is applied,
///   so a read submitted after the completion sees it. ``write(batch:completion:)`` keeps this order at one
///   queue hop per shard per batch.
/// - **Change records.** The observer gets a ``ChangeRecord`` for every applied write, on the queue of the
///   reporting shard, in apply order, before the write's completion (so events can go out before the ack).
/// - **Durability.** With persistence, a write's record goes to the shard's journal and its completion runs when
///   the record is durable under the ``FsyncPolicy``. Writes are visible to readers as soon as they are applied,
///   which may be before they are durable; only the completion waits.
///
/// The API is callback based; completions and observer calls run on store-owned queues and must not block.
public final class Store: Sendable {
    /// How the tree is split.
    public let layout: ShardLayout
    /// What start-up found (empty for an in-memory store).
    public let loadReport: LoadReport

    let shards: [Shard]
    let observer: (@Sendable (ChangeRecord) -> Void)?
    let clock: @Sendable () -> Double
    /// The next multi-shard transaction id; holding this mutex while enqueueing a multi-shard operation's first
    /// tasks is what orders multi-shard operations globally.
    let submission: Mutex<UInt64>
    let isClosed = Atomic<Bool>(false)
    let persistence: PersistenceDriver?
    /// The whole tree when ``StoreConfiguration/tracksWholeTree`` is set.
    let wholeTree: WholeTree?

    /// Opens a store: in memory, or from its namespace directory (loading the snapshot and replaying journals).
    ///
    /// - Parameters:
    ///   - configuration: layout, persistence and clock.
    ///   - observer: receives a ``ChangeRecord`` for every applied write (see the type's discussion).
    /// - Throws: ``JournalError`` when the directory is locked by another process or its files are damaged.
    public init(configuration: StoreConfiguration, observer: (@Sendable (ChangeRecord) -> Void)? = nil)
        throws(JournalError)
    {
        self.observer = observer
        clock = configuration.clock
        guard let settings = configuration.persistence else {
            layout = configuration.layout
            loadReport = LoadReport()
            shards = (0..<layout.count).map { index in
                Shard(index: index, state: ShardState(), journal: nil, label: "canopy.store.shard.\(index)")
            }
            submission = Mutex(1)
            persistence = nil
            wholeTree = configuration.tracksWholeTree ? WholeTree(.empty) : nil
            return
        }
        let files = NamespaceFiles(directory: settings.directory)
        if !settings.readOnly { try FileSystem.makeDirectories(settings.directory) }
        let lock: DirectoryLock? = settings.readOnly && !FileSystem.isDirectory(settings.directory)
            ? nil : try DirectoryLock(path: files.lockPath, directory: settings.directory)
        do throws(JournalError) {
            let loaded = try NamespaceLoader.load(
                files, configuredLayout: configuration.layout, repair: settings.repair, readOnly: settings.readOnly)
            layout = loaded.layout
            loadReport = loaded.report
            var shards: [Shard] = []
            for index in 0..<loaded.layout.count {
                let journal = settings.readOnly ? nil : try JournalWriter(
                    directory: files.journalDirectory(shard: index), existing: loaded.segments[index],
                    policy: settings.fsyncPolicy, maxSegmentBytes: settings.maxSegmentBytes,
                    label: "canopy.store.journal.\(index)")
                shards.append(Shard(index: index, state: loaded.states[index], journal: journal,
                                    label: "canopy.store.shard.\(index)"))
            }
            self.shards = shards
            submission = Mutex(loaded.nextTransactionId)
            wholeTree = configuration.tracksWholeTree
                ? WholeTree(TreeView(layout: loaded.layout, states: loaded.states.map { Optional($0) }).value(at: .root))
                : nil
        } catch {
            lock?.unlock()
            throw error
        }
        persistence = PersistenceDriver(settings: settings, files: files, lock: lock)
        persistence?.start(store: self)
    }

    /// The whole tree as of the last applied write, or `nil` unless ``StoreConfiguration/tracksWholeTree`` is set.
    public var wholeTreeSnapshot: Node? {
        wholeTree?.snapshot
    }

    /// The queue of shard `index`, on which its observer calls run (for `dispatchPrecondition` in observers).
    public func queue(ofShard index: Int) -> DispatchQueue {
        shards[index].queue
    }

    /// Whether writes are accepted (not closed, not opened read-only).
    var acceptsWrites: Bool {
        !isClosed.load(ordering: .relaxed) && !(persistence?.settings.readOnly ?? false)
    }

    // MARK: - Multi-shard coordination

    /// Enqueues one task on each of `participants` in the global order of multi-shard operations. Each task
    /// (optionally holding its shard, see ``Shard``) runs `perShard` and captures the shard's state; the last one
    /// calls `completion` with the transaction id and every captured state (by shard index), on its queue.
    func coordinate(_ participants: [Int], holding: Bool, perShard: (@Sendable (Shard) -> Void)? = nil,
                    completion: @escaping @Sendable (UInt64, [ShardState?]) -> Void)
    {
        let gather = CaptureGather(shardCount: layout.count, expected: participants.count)
        submission.withLock { nextId in
            let id = nextId
            nextId += 1
            for index in participants {
                let shard = shards[index]
                shard.submit {
                    if holding { shard.hold() }
                    perShard?(shard)
                    if let states = gather.add(shard.state, at: index) { completion(id, states) }
                }
            }
        }
    }
}

/// Collects the states captured by a multi-shard operation's first tasks.
final class CaptureGather: Sendable {
    private let state: Mutex<(states: [ShardState?], remaining: Int)>

    init(shardCount: Int, expected: Int) {
        state = Mutex((Array(repeating: nil, count: shardCount), expected))
    }

    /// Adds one shard's state; returns all of them when it was the last.
    func add(_ captured: ShardState, at index: Int) -> [ShardState?]? {
        state.withLock { gathered in
            gathered.states[index] = captured
            gathered.remaining -= 1
            return gathered.remaining == 0 ? gathered.states : nil
        }
    }
}
