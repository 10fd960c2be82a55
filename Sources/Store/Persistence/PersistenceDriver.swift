import Dispatch
import Synchronization

/// Takes a store's snapshots (on request, on a timer, at close) on its own queue, and holds the directory lock.
///
/// A snapshot is taken in one sequencer task, which captures the log state (an immutable value: the tree is
/// copy-on-write) and tells the journal to start a new segment at the next sequence number. The file is then
/// encoded and written here while the sequencer goes on; once it is durable, the journal deletes the segments the
/// snapshot covers.
///
/// | Owner | State |
/// |---|---|
/// | `queue` | the timer, whether a snapshot runs, the completions waiting for the running and the next one |
/// | the store's sequencer | `lock` (set while loading, released at close) |
final class PersistenceDriver: @unchecked Sendable {
    // Every `var` below is owned by `queue`, except `lock`.
    let settings: PersistenceConfiguration
    let files: NamespaceFiles
    /// The namespace directory's lock, taken when the store loads.
    var lock: DirectoryLock?
    let queue = DispatchQueue(label: "canopy.store.snapshots")
    private var timer: (any DispatchSourceTimer)?
    private var isRunning = false
    private var waitingForRunning: [@Sendable (Result<Void, JournalError>) -> Void] = []
    private var waitingForNext: [@Sendable (Result<Void, JournalError>) -> Void] = []
    private var nextRequested = false
    private var lastSnapshot = DispatchTime.now()
    private var journalBytesAtLastSnapshot = 0
    /// The sequence the last snapshot covers (at start-up: the one loaded, or where replay began).
    private var sequenceAtLastSnapshot: UInt64 = 0
    /// What replaying one record costs (``ReplayCost``).
    private var replayCost = ReplayCost.measuredDefault

    /// How often the timer checks whether a snapshot is due: every second, or more often for a shorter
    /// snapshot interval (tests use a fraction of a second).
    var checkIntervalMilliseconds: Int {
        guard let interval = settings.snapshotIntervalSeconds else { return 1000 }
        return min(1000, max(10, Int(interval * 500)))
    }

    init(settings: PersistenceConfiguration) {
        self.settings = settings
        files = NamespaceFiles(directory: settings.directory)
    }

    /// Starts the snapshot timer (unless read-only). What start-up replayed because no snapshot covers it (the
    /// journal's `uncoveredJournalBytes`, the records after `snapshotSequence`) counts as grown since the last
    /// snapshot: a server killed again and again before its own thresholds would otherwise never take one, and
    /// every start would replay more. `replayCost` is what this start's replay showed.
    func start(driver: JournalDriver, uncoveredJournalBytes: Int, snapshotSequence: UInt64, replayCost: ReplayCost) {
        guard !settings.readOnly else { return }
        queue.async { [self] in
            journalBytesAtLastSnapshot = -uncoveredJournalBytes
            sequenceAtLastSnapshot = snapshotSequence
            self.replayCost = replayCost
            let timer = DispatchSource.makeTimerSource(queue: queue)
            let interval = DispatchTimeInterval.milliseconds(checkIntervalMilliseconds)
            timer.schedule(deadline: .now() + interval, repeating: interval)
            timer.setEventHandler { [weak driver, self] in
                guard let driver else { return }
                let appended = driver.appended
                if isDue(journalBytes: appended.bytes, sequence: appended.sequence) {
                    request(driver: driver, completion: nil)
                }
            }
            timer.resume()
            self.timer = timer
        }
    }

    /// Stops the timer; blocks until it is stopped.
    func stop() {
        queue.sync {
            timer?.cancel()
            timer = nil
        }
    }

    private func isDue(journalBytes: Int, sequence: UInt64) -> Bool {
        dispatchPrecondition(condition: .onQueue(queue))
        let grown = journalBytes - journalBytesAtLastSnapshot
        if grown >= settings.snapshotJournalBytes { return true }
        let records = sequence > sequenceAtLastSnapshot ? sequence - sequenceAtLastSnapshot : 0
        if replayCost.seconds(toReplay: records) >= settings.snapshotReplaySeconds { return true }
        guard grown > 0, let interval = settings.snapshotIntervalSeconds else { return false }
        return Double(DispatchTime.now().uptimeNanoseconds - lastSnapshot.uptimeNanoseconds) / 1e9 >= interval
    }

    /// Asks for a snapshot that starts after this call; `completion` (if any) runs when it is durable.
    func request(driver: JournalDriver, completion: (@Sendable (Result<Void, JournalError>) -> Void)?) {
        queue.async { [self] in
            if isRunning {
                nextRequested = true
                if let completion { waitingForNext.append(completion) }
                return
            }
            if let completion { waitingForRunning.append(completion) }
            begin(driver: driver)
        }
    }

    private func begin(driver: JournalDriver) {
        dispatchPrecondition(condition: .onQueue(queue))
        isRunning = true
        let journalBytes = driver.appended.bytes
        driver.sequencer.queue.async { [self] in
            let state = driver.sequencer.state
            driver.journal?.rotate(nextSequence: state.sequence + 1)
            let contents = StateSnapshotFile.Contents(
                root: state.root, sequence: state.sequence, timestamp: state.timestamp, rules: state.rules)
            let journal = driver.journal
            queue.async { [self] in
                let result = Result { () throws(JournalError) in
                    try StateSnapshotFile.write(contents, to: files.statePath)
                }
                if case .success = result {
                    journal?.removeSegments(coveredThrough: contents.sequence)
                    lastSnapshot = .now()
                    journalBytesAtLastSnapshot = journalBytes
                    sequenceAtLastSnapshot = contents.sequence
                }
                finish(driver: driver, result: result)
            }
        }
    }

    private func finish(driver: JournalDriver, result: Result<Void, JournalError>) {
        dispatchPrecondition(condition: .onQueue(queue))
        let completions = waitingForRunning
        waitingForRunning = waitingForNext
        waitingForNext = []
        isRunning = false
        for completion in completions { completion(result) }
        if nextRequested {
            nextRequested = false
            begin(driver: driver)
        }
    }
}

extension JournalDriver {
    /// Bytes appended to the journal since the store opened, and the sequence of the last record applied.
    var appended: (bytes: Int, sequence: UInt64) {
        sequencer.queue.sync { (journal?.appendedBytes ?? 0, sequencer.state.sequence) }
    }

    /// A no-op for in-memory and read-only stores.
    func takeSnapshot(completion: @escaping @Sendable (Result<Void, JournalError>) -> Void) {
        guard let persistence, !persistence.settings.readOnly else {
            completion(.success(()))
            return
        }
        persistence.request(driver: self, completion: completion)
    }

    /// Takes a final snapshot, syncs and closes the journal and releases the directory lock.
    func close() throws(JournalError) {
        guard let persistence else { return }
        let journal: JournalWriter? = sequencer.queue.sync { self.journal }
        defer { sequencer.queue.sync { persistence.lock?.unlock() } }
        guard !persistence.settings.readOnly, journal != nil else { return }
        persistence.stop()
        let outcome = Mutex<Result<Void, JournalError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        persistence.request(driver: self) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        var failure: JournalError?
        do throws(JournalError) {
            try journal?.close()
        } catch {
            failure = error
        }
        if case .failure(let error)? = outcome.withLock({ $0 }) { throw error }
        if let failure { throw failure }
    }

    /// No final snapshot; the journal is closed (its records are already written) and the lock is released.
    func abandon() {
        guard let persistence else { return }
        persistence.stop()
        sequencer.queue.sync {
            try? journal?.close()
            persistence.lock?.unlock()
        }
    }
}
