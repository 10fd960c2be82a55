import DataModel
import Dispatch
import Synchronization

/// One namespace's tree and its log: every write, rules change and read takes effect in one order.
///
/// - **One sequencer.** All work reaches the store as tasks on one serial queue, the sequencer, in submission
///   order. A write is given its place in the namespace's log there (a ``LogEntry``: sequence number, server time,
///   caller, rules version) and applied at once by ``LogState/apply(_:isReplay:)``, a pure function of the state
///   and the entry: compare-and-set, server values, push ids and the rules' decision all derive from the entry and
///   the tree every earlier entry built. Reads and listen registrations (``inOrder(publishing:_:)``) run on the same queue,
///   so a read submitted after a write sees it, and a caller that submits from one thread (a connection's event
///   loop) has its requests take effect in the order it sent them.
/// - **Change records.** The observer gets a ``ChangeRecord`` for every applied write, on the sequencer, in log
///   order, before the write's completion (so events can go out before the acknowledgement); `afterTask` runs at the
///   end of every task that applied writes, before their completions (to hand a task's events off at once).
///   Readers that need no
///   place in the order can use ``current`` while nothing was sequenced since it was taken.
/// - **Durability.** With persistence, every entry — rejected writes included, so that replay re-takes every
///   decision — goes to the namespace's journal, group-committed; a write's completion runs when its entry is
///   durable under the ``FsyncPolicy``, in log order. Snapshots of the state bound the replay at start-up.
/// - **Throughput** comes from batching, not from racing: ``write(batch:by:completion:)`` sequences a connection's
///   pipelined writes in one task, and their entries share one group commit.
///
/// | Owner | State |
/// |---|---|
/// | `queue` (the sequencer) | the log state, the journal handle, framed records, completions waiting for them |
/// | `published` mutex | the state a publishing ``inOrder(publishing:_:)`` task last saw, for readers that need no place in the order |
///
/// The API is callback based; completions and observer calls run on store-owned queues and must not block.
public final class Store: @unchecked Sendable {
    /// What start-up found (empty for an in-memory store, and until a background load finished).
    public var loadReport: LoadReport { report.withLock { $0 } }

    /// The sequencer.
    let queue: DispatchQueue
    let observer: (@Sendable (ChangeRecord) -> Void)?
    let afterTask: (@Sendable () -> Void)?
    let clock: @Sendable () -> Double
    let compiler: RulesCompiler?
    let persistence: PersistenceDriver?
    /// The cluster's log, `nil` for a single node.
    let replication: (any ReplicatedLog)?
    /// Cluster mode: hash the tree every this many positions, and whom to tell of a divergence.
    let checkpointInterval: UInt64
    let divergence: (@Sendable (Checkpoint, Checkpoint) -> Void)?
    let declaredDown: (@Sendable () -> Void)?
    let isClosed = Atomic<Bool>(false)
    /// Left once loading ended (successfully or not); ``waitUntilLoaded()`` waits for it.
    private let loading = DispatchGroup()
    let report = Mutex(LoadReport())
    /// The state the last publishing ``inOrder(publishing:_:)`` task saw; current while its sequence is
    /// ``appliedSequence``.
    private let published = Mutex<StoreSnapshot?>(nil)
    /// The sequence number of the last entry applied, stored at the end of each task before its completions run.
    private let appliedSequence = Atomic<UInt64>(0)
    /// Whether loading succeeded, or failed (both stay false while it runs).
    private let loaded = Atomic<Bool>(false)
    private let failed = Atomic<Bool>(false)

    // Owned by `queue`:
    /// The namespace as the log built it.
    var state: LogState
    /// The journal, `nil` in memory (and until loaded).
    private(set) var journal: JournalWriter?
    /// Why the namespace could not be loaded; every later operation fails.
    private var loadFailure: JournalError?
    /// Journal records framed by the current task (reused between tasks).
    private var records = FramedRecords()
    /// A clustered store's own state (see ``ReplicaState``).
    var replica = ReplicaState()

    /// Opens a store and loads it before returning: in memory, or from its namespace directory (state snapshot,
    /// journal replay; a directory of the earlier sharded format is migrated).
    ///
    /// - Throws: ``JournalError`` when the directory is locked by another process or its files are damaged.
    public convenience init(configuration: StoreConfiguration, observer: (@Sendable (ChangeRecord) -> Void)? = nil)
        throws(JournalError)
    {
        self.init(unloaded: configuration, observer: observer, afterTask: nil)
        if replication != nil {
            queue.async { [self] in startReplica { _ in } }
        } else {
            queue.sync { _ = load(configuration) }
        }
        if let failure = waitUntilLoaded() { throw failure }
    }

    /// Opens a store whose loading runs on its sequencer, off the caller's thread: everything submitted meanwhile
    /// waits behind it. `loaded` runs on the sequencer once loading ended (with the failure, after which every
    /// operation is refused). `observer` gets every applied write's record and `afterTask` the end of every task
    /// that applied writes, both on the sequencer.
    public static func opening(configuration: StoreConfiguration,
                               observer: (@Sendable (ChangeRecord) -> Void)? = nil,
                               afterTask: (@Sendable () -> Void)? = nil,
                               loaded: @escaping @Sendable (Result<LoadReport, JournalError>) -> Void) -> Store
    {
        let store = Store(unloaded: configuration, observer: observer, afterTask: afterTask)
        store.queue.async {
            if store.replication != nil {
                store.startReplica(loaded: loaded)
            } else if let failure = store.load(configuration) {
                loaded(.failure(failure))
            } else {
                loaded(.success(store.loadReport))
            }
        }
        return store
    }

    private init(unloaded configuration: StoreConfiguration, observer: (@Sendable (ChangeRecord) -> Void)?,
                 afterTask: (@Sendable () -> Void)?)
    {
        self.observer = observer
        self.afterTask = afterTask
        clock = configuration.clock
        compiler = configuration.rulesCompiler
        queue = DispatchQueue(label: "canopy.store.sequencer")
        state = LogState(compiler: configuration.rulesCompiler)
        replication = configuration.replication
        checkpointInterval = max(1, configuration.checkpointInterval)
        divergence = configuration.divergence
        declaredDown = configuration.declaredDown
        persistence = replication == nil ? configuration.persistence.map { PersistenceDriver(settings: $0) } : nil
        loading.enter()
    }

    /// Loads the namespace (on the sequencer); returns why it failed.
    private func load(_ configuration: StoreConfiguration) -> JournalError? {
        dispatchPrecondition(condition: .onQueue(queue))
        // Journal bytes on disk that no snapshot covers: the next snapshot is due by them too.
        var uncoveredJournalBytes = 0
        guard let persistence, let settings = configuration.persistence else {
            loaded.store(true, ordering: .releasing)
            loading.leave()
            return nil
        }
        do throws(JournalError) {
            let files = persistence.files
            if !settings.readOnly { try FileSystem.makeDirectories(settings.directory) }
            if !(settings.readOnly && !FileSystem.isDirectory(settings.directory)) {
                persistence.lock = try DirectoryLock(path: files.lockPath, directory: settings.directory)
            }
            let loaded = try LogLoader.load(files, compiler: compiler, repair: settings.repair,
                                            readOnly: settings.readOnly)
            uncoveredJournalBytes = loaded.segments.reduce(0) { $0 + ((try? FileSystem.fileSize($1.path)) ?? 0) }
            state = loaded.state
            report.withLock { $0 = loaded.report }
            if !settings.readOnly {
                journal = try JournalWriter(
                    directory: files.logDirectory, existing: loaded.segments, policy: settings.fsyncPolicy,
                    maxSegmentBytes: settings.maxSegmentBytes, label: "canopy.store.journal", faults: settings.faults,
                    events: configuration.journalEvents)
            }
        } catch {
            persistence.lock?.unlock()
            persistence.lock = nil
            fail(loading: error)
            return error
        }
        appliedSequence.store(state.sequence, ordering: .releasing)
        loaded.store(true, ordering: .releasing)
        loading.leave()
        persistence.start(store: self, uncoveredJournalBytes: uncoveredJournalBytes)
        return nil
    }

    /// Ends loading with `error`: every later operation is refused. On the sequencer.
    func fail(loading error: JournalError) {
        loadFailure = error
        isClosed.store(true, ordering: .relaxed)
        failed.store(true, ordering: .releasing)
        loading.leave()
    }

    /// Ends a successful load: the store serves from now on. On the sequencer.
    func finishLoading() {
        appliedSequence.store(state.sequence, ordering: .releasing)
        loaded.store(true, ordering: .releasing)
        loading.leave()
    }

    /// Blocks until the store loaded; returns why it could not (never call it on the sequencer or an event loop).
    public func waitUntilLoaded() -> JournalError? {
        loading.wait()
        return queue.sync { loadFailure }
    }

    /// Whether the namespace loaded (false while loading, and for good after a failure).
    public var isLoaded: Bool {
        loaded.load(ordering: .acquiring)
    }

    /// Whether loading failed: every operation is refused for good.
    public var hasFailed: Bool {
        failed.load(ordering: .acquiring)
    }

    /// The state as the last publishing ``inOrder(publishing:_:)`` task saw it, when nothing was sequenced since;
    /// `nil` otherwise (then read in order, publishing). It holds every write whose completion ran, so a reader that
    /// needs no place in the order (one whose earlier requests were all answered) can use it without a hop to the
    /// sequencer. Published only by such readers: other workloads never share the tree (which would make the next
    /// write copy its path).
    public var current: StoreSnapshot? {
        guard let snapshot = published.withLock({ $0 }),
            snapshot.sequence == appliedSequence.load(ordering: .acquiring)
        else { return nil }
        return snapshot
    }

    /// Whether writes are accepted (loaded, not closed, not opened read-only).
    var acceptsWrites: Bool {
        !isClosed.load(ordering: .relaxed) && !(persistence?.settings.readOnly ?? false)
    }

    // MARK: - The sequencer

    /// Runs `body` on the sequencer after everything submitted before, with the state as it is there.
    ///
    /// This is how a caller takes its place in the order without writing: a listen registers its view, a `get`
    /// reads, an onDisconnect registration is judged, each against a tree that holds every write submitted before
    /// it. `body` must be quick and must not block (hand longer work to another queue). With `publishing`, the
    /// state also becomes ``current`` for later readers.
    public func inOrder(publishing: Bool = false, _ body: @escaping @Sendable (StoreSnapshot) -> Void) {
        submit { [self] in
            let run = { [self] in
                let snapshot = currentSnapshot()
                if publishing, snapshot.isAvailable { published.withLock { $0 = snapshot } }
                body(snapshot)
            }
            // A replica answers only once its own writes proposed before this read are applied; writes proposed
            // after it go into a later message, so it does not wait for (nor see) them.
            if replication != nil, replica.hasOutstandingProposals {
                appendGathered()
                replica.deferred.append((after: replica.lastProposal, run: run))
            } else {
                run()
            }
        }
    }

    /// Runs `body` on the sequencer after everything submitted before. A clustered store that has not caught up
    /// with its log yet holds it until it has (in submission order), so nothing is proposed or answered before
    /// the replica holds everything the log held when it opened.
    func submit(_ body: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            if replication != nil, !isLoaded, !hasFailed {
                replica.untilServing.append(body)
            } else {
                body()
            }
        }
    }

    /// The state as a task sees it now; `now` is the server time, never before the last entry's.
    private func currentSnapshot() -> StoreSnapshot {
        StoreSnapshot(root: state.root, sequence: state.sequence, now: max(state.timestamp, clock()),
                      rules: state.rules, policy: state.policy, isAvailable: loadFailure == nil)
    }


    /// Gives `write` by `caller` the next place in the log and applies it, reporting it to the observer; frames
    /// its journal record (rejected or not). On the sequencer.
    func sequence(_ write: StoreWrite, by caller: WriteCaller) -> Result<WriteOutcome, StoreError> {
        let entry = nextEntry(.write(write, caller: caller, rulesVersion: state.rules.version))
        let result = state.applyWrite(write, caller: caller, entry: entry, isReplay: false)
        if case .success(let (_, record)) = result { observer?(record) }
        frame(entry)
        return result.map(\.0)
    }

    /// Gives a rules revision the next place in the log and puts it in force; frames its journal record.
    func sequence(_ revision: RulesRevision) {
        let entry = nextEntry(.rules(revision))
        _ = state.apply(entry)
        frame(entry)
    }

    /// The entry after the last one: the next sequence number, the server time (never going back).
    private func nextEntry(_ operation: LogOperation) -> LogEntry {
        LogEntry(sequence: state.sequence + 1, timestamp: max(state.timestamp, clock()), operation: operation)
    }

    /// Frames `entry`'s journal record into the task's records (with a journal).
    private func frame(_ entry: LogEntry) {
        if journal != nil { records.append(sequence: entry.sequence) { LogEntryCodec.encode(entry, into: &$0) } }
    }

    /// Ends a task that sequenced entries: marks its state applied (so ``current`` no longer serves an older one),
    /// then hands the task's records to the journal with `settle`, which runs once they are durable (at once, in
    /// memory) with the journal's outcome.
    func finishTask(settle: @escaping @Sendable (Result<Void, JournalError>) -> Void) {
        appliedSequence.store(state.sequence, ordering: .releasing)
        afterTask?()
        guard let journal, !records.isEmpty else {
            settle(.success(()))
            return
        }
        journal.append(records, ack: settle)
        records.removeAll()
    }

    /// Why a write cannot be sequenced now, `nil` when it can. On the sequencer.
    func refusal() -> StoreError? {
        if loadFailure != nil || !acceptsWrites { return .unavailable }
        if journal?.hasFailed ?? false { return .unavailable }
        if let full = journal?.outOfSpace { return .diskFull(full) }
        return nil
    }
}

/// The state of a store as one task on its sequencer saw it.
public struct StoreSnapshot: Sendable {
    /// The whole tree.
    public let root: Node
    /// The sequence number of the last entry applied.
    public let sequence: UInt64
    /// The server time for rules that read `now` (milliseconds since the Unix epoch, never before the last entry's).
    public let now: Double
    /// The rules revision in force.
    public let rules: RulesRevision
    /// The compiled rules in force (`nil`: none).
    public let policy: (any AuthorizationPolicy)?
    /// Whether the namespace loaded (otherwise every operation fails and the tree is empty).
    public let isAvailable: Bool
}
