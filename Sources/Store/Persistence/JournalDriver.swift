import DataModel
import Dispatch
import Synchronization

/// The single node's ``LogDriver``: the sequencer gives each entry its place at once and applies it; with
/// persistence, every entry (rejected writes and rules revisions included, so that replay re-takes every decision)
/// is framed into the task's records and handed to the namespace's journal, group-committed, and a write completes
/// once its entry is durable under the ``FsyncPolicy``. Start-up loads the newest state snapshot and replays the
/// journal after it. A connection's onDisconnect write is kept here until the connection ends.
///
/// | Owner | State |
/// |---|---|
/// | the sequencer | the journal handle, the records framed by the current task, the directory lock |
/// | `armed` mutex | the armed onDisconnect writes, by connection |
final class JournalDriver: LogDriver, @unchecked Sendable {
    let sequencer: Sequencer
    /// Snapshots and the directory lock; `nil` in memory.
    let persistence: PersistenceDriver?
    private let journalEvents: (@Sendable (JournalEvent) -> Void)?
    private let armed = Mutex<[String: StoreWrite]>([:])

    // Owned by the sequencer:
    /// The journal, `nil` in memory (and until loaded).
    private(set) var journal: JournalWriter?
    /// Journal records framed in the current turn (reused between turns).
    private var records = FramedRecords()
    /// The completions of the current turn's tasks, in order, run once the turn's records are durable.
    private var settles: [@Sendable (Result<Void, JournalError>) -> Void] = []
    /// Whether a task of the current turn sequenced entries (its events wait for the turn's end).
    private var turnSequenced = false

    init(sequencer: Sequencer, configuration: StoreConfiguration) {
        self.sequencer = sequencer
        persistence = configuration.persistence.map { PersistenceDriver(settings: $0) }
        journalEvents = configuration.journalEvents
    }

    // MARK: - Loading

    func load(loaded: @escaping @Sendable (Result<LoadReport, JournalError>) -> Void) {
        if let failure = loadJournal() {
            loaded(.failure(failure))
        } else {
            loaded(.success(sequencer.report.withLock { $0 }))
        }
    }

    /// Loads the namespace's directory (state snapshot, journal replay); returns why it failed.
    private func loadJournal() -> JournalError? {
        dispatchPrecondition(condition: .onQueue(sequencer.queue))
        guard let persistence else {
            sequencer.finishLoading()
            return nil
        }
        let settings = persistence.settings
        // Journal bytes on disk that no snapshot covers: the next snapshot is due by them too.
        var uncoveredJournalBytes = 0
        var snapshotSequence: UInt64 = 0
        var replayCost = ReplayCost.measuredDefault
        do throws(JournalError) {
            let files = persistence.files
            if !settings.readOnly { try FileSystem.makeDirectories(settings.directory) }
            if !(settings.readOnly && !FileSystem.isDirectory(settings.directory)) {
                persistence.lock = try DirectoryLock(path: files.lockPath, directory: settings.directory)
            }
            let loaded = try LogLoader.load(files, compiler: sequencer.compiler, repair: settings.repair,
                                            readOnly: settings.readOnly)
            uncoveredJournalBytes = loaded.segments.reduce(0) { $0 + ((try? FileSystem.fileSize($1.path)) ?? 0) }
            sequencer.state = loaded.state
            let replayed = loaded.report.replayedRecords
            snapshotSequence = loaded.state.sequence >= UInt64(replayed) ? loaded.state.sequence - UInt64(replayed) : 0
            replayCost = ReplayCost.observed(records: replayed, seconds: loaded.report.replaySeconds)
            sequencer.report.withLock { $0 = loaded.report }
            if !settings.readOnly {
                journal = try JournalWriter(
                    directory: files.logDirectory, existing: loaded.segments, policy: settings.fsyncPolicy,
                    maxSegmentBytes: settings.maxSegmentBytes, label: "canopy.store.journal", faults: settings.faults,
                    events: journalEvents)
            }
        } catch {
            persistence.lock?.unlock()
            persistence.lock = nil
            sequencer.fail(loading: error)
            return error
        }
        sequencer.finishLoading()
        persistence.start(driver: self, uncoveredJournalBytes: uncoveredJournalBytes, snapshotSequence: snapshotSequence,
                          replayCost: replayCost)
        return nil
    }

    // MARK: - Tasks

    func run(_ task: @escaping @Sendable () -> Void) { task() }

    func runRead(_ read: @escaping () -> Void) { read() }

    /// The node's state holds every write acknowledged: there is no other node.
    var publishesCurrent: Bool { true }

    /// A single node has no log to be cut off from.
    var isCutOff: Bool { false }

    func refusal() -> StoreError? {
        if sequencer.isRefusing || persistence?.settings.readOnly == true { return .unavailable }
        if journal?.hasFailed ?? false { return .unavailable }
        if let full = journal?.outOfSpace { return .diskFull(full) }
        return nil
    }

    // MARK: - Writes

    func write(_ write: StoreWrite, by caller: WriteCaller,
               completion: @escaping @Sendable (Result<WriteOutcome, StoreError>) -> Void)
    {
        let result = sequence(write, by: caller)
        finishTask { journal in completion(Self.settle(result, journal: journal)) }
    }

    func write(batch writes: [StoreWrite], by caller: WriteCaller,
               completion: @escaping @Sendable (Int, Result<WriteOutcome, StoreError>) -> Void)
    {
        var results: [Result<WriteOutcome, StoreError>] = []
        results.reserveCapacity(writes.count)
        for write in writes {
            results.append(sequence(write, by: caller))
        }
        let settled = results
        finishTask { journal in
            for (index, result) in settled.enumerated() { completion(index, Self.settle(result, journal: journal)) }
        }
    }

    func installRules(source: [UInt8]?, completion: (@Sendable (Result<RulesRevision, StoreError>) -> Void)?) {
        let revision = RulesRevision(version: sequencer.state.rules.version + 1, source: source)
        let entry = nextEntry(.rules(revision))
        _ = sequencer.state.apply(entry)
        frame(entry)
        finishTask { journal in
            completion?(journal.map { revision }.mapError { .persistence($0) })
        }
    }

    /// Gives `write` by `caller` the next place in the log and applies it, reporting it to the observer; frames
    /// its journal record (rejected or not).
    private func sequence(_ write: StoreWrite, by caller: WriteCaller) -> Result<WriteOutcome, StoreError> {
        let entry = nextEntry(.write(write, caller: caller, rulesVersion: sequencer.state.rules.version))
        let result = sequencer.state.applyWrite(write, caller: caller, entry: entry, isReplay: false)
        if case .success(let (_, record)) = result { sequencer.observer?(record) }
        frame(entry)
        return result.map(\.0)
    }

    /// The entry after the last one: the next sequence number, the server time (never going back).
    private func nextEntry(_ operation: LogOperation) -> LogEntry {
        LogEntry(sequence: sequencer.state.sequence + 1,
                 timestamp: max(sequencer.state.timestamp, sequencer.clock()), operation: operation)
    }

    /// Frames `entry`'s journal record into the task's records (with a journal).
    private func frame(_ entry: LogEntry) {
        if journal != nil { records.append(sequence: entry.sequence) { LogEntryCodec.encode(entry, into: &$0) } }
    }

    /// Ends a task that sequenced entries: `settle` runs with the journal's outcome once the turn's records are
    /// durable (at the turn's end, in memory), after the turn's events were handed on.
    private func finishTask(settle: @escaping @Sendable (Result<Void, JournalError>) -> Void) {
        turnSequenced = true
        settles.append(settle)
    }

    /// Completes a refused write in its place among the turn's completions.
    func settleRefused(_ completion: @escaping @Sendable () -> Void) {
        settles.append { _ in completion() }
    }

    /// Ends the turn: marks its entries applied and hands their events on (``Sequencer/endTask()``), then hands its
    /// records to the journal in one append, whose acknowledgement runs the turn's completions in order (at once,
    /// in memory, or with nothing to append).
    func endTurn() {
        if turnSequenced {
            turnSequenced = false
            sequencer.endTask()
        }
        guard !settles.isEmpty else { return }
        let turnSettles = settles
        settles.removeAll(keepingCapacity: true)
        guard let journal, !records.isEmpty else {
            for settle in turnSettles { settle(.success(())) }
            return
        }
        journal.append(records) { outcome in
            for settle in turnSettles { settle(outcome) }
        }
        records.removeAll()
    }

    /// The result delivered for a write whose entry settled in the journal: a journal failure fails an applied
    /// write; a rejected write keeps its own reason.
    private static func settle(_ result: Result<WriteOutcome, StoreError>, journal: Result<Void, JournalError>)
        -> Result<WriteOutcome, StoreError>
    {
        if case .success = result, case .failure(let error) = journal { return .failure(.persistence(error)) }
        return result
    }

    // MARK: - Reads and onDisconnect

    func awaitLogHead(resumingOn hop: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
                      _ then: @escaping @Sendable () -> Void)
    {
        then()
    }

    /// Keeps `write` until ``fireDisconnect(session:completion:)``: the connection ends on this node, or not at all.
    func armDisconnect(session: String, write: StoreWrite?, completion: @escaping @Sendable (Bool) -> Void) {
        armed.withLock { $0[session] = write }
        completion(true)
    }

    /// Sequences the armed write as a privileged write (it was judged when registered), like any other write.
    func fireDisconnect(session: String,
                        completion: @escaping @Sendable (Result<WriteOutcome, StoreError>?) -> Void)
    {
        guard let write = armed.withLock({ $0.removeValue(forKey: session) }) else { return completion(nil) }
        if let refusal = refusal() { return completion(.failure(refusal)) }
        self.write(write, by: .privileged) { completion($0) }
    }
}
