import Dispatch
import Synchronization

/// Takes a store's snapshots (on request, on a timer, at close) on its own queue, and holds the directory lock.
///
/// A snapshot is a consistent cut of all shards: one multi-shard task per shard (in the global order, so no
/// multi-shard write is half in it) captures the shard's state and tells its journal to start a new segment at
/// the next sequence. The states are immutable values, so the file is then encoded and written here while the
/// shards go on; once it is durable, each journal deletes the segments the snapshot covers.
///
/// | Owner | State |
/// |---|---|
/// | `queue` | the timer, whether a snapshot runs, the completions waiting for the running and the next one |
final class PersistenceDriver: @unchecked Sendable {
    // Every `var` below is owned by `queue`.
    let settings: PersistenceConfiguration
    let files: NamespaceFiles
    let lock: DirectoryLock?
    let queue = DispatchQueue(label: "canopy.store.snapshots")
    private var timer: (any DispatchSourceTimer)?
    private var isRunning = false
    private var waitingForRunning: [@Sendable (Result<Void, JournalError>) -> Void] = []
    private var waitingForNext: [@Sendable (Result<Void, JournalError>) -> Void] = []
    private var nextRequested = false
    private var lastSnapshot = DispatchTime.now()
    private var journalBytesAtLastSnapshot = 0

    /// How often the timer checks whether a snapshot is due: every second, or more often for a shorter
    /// snapshot interval (tests use a fraction of a second).
    var checkIntervalMilliseconds: Int {
        guard let interval = settings.snapshotIntervalSeconds else { return 1000 }
        return min(1000, max(10, Int(interval * 500)))
    }

    init(settings: PersistenceConfiguration, files: NamespaceFiles, lock: DirectoryLock?) {
        self.settings = settings
        self.files = files
        self.lock = lock
    }

    /// Starts the snapshot timer (unless read-only).
    func start(store: Store) {
        guard !settings.readOnly else { return }
        queue.async { [self] in
            let timer = DispatchSource.makeTimerSource(queue: queue)
            let interval = DispatchTimeInterval.milliseconds(checkIntervalMilliseconds)
            timer.schedule(deadline: .now() + interval, repeating: interval)
            timer.setEventHandler { [weak store, self] in
                guard let store else { return }
                if isDue(journalBytes: store.journalBytes) { request(store: store, completion: nil) }
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

    private func isDue(journalBytes: Int) -> Bool {
        dispatchPrecondition(condition: .onQueue(queue))
        let grown = journalBytes - journalBytesAtLastSnapshot
        if grown >= settings.snapshotJournalBytes { return true }
        guard grown > 0, let interval = settings.snapshotIntervalSeconds else { return false }
        return Double(DispatchTime.now().uptimeNanoseconds - lastSnapshot.uptimeNanoseconds) / 1e9 >= interval
    }

    /// Asks for a snapshot that starts after this call; `completion` (if any) runs when it is durable.
    func request(store: Store, completion: (@Sendable (Result<Void, JournalError>) -> Void)?) {
        queue.async { [self] in
            if isRunning {
                nextRequested = true
                if let completion { waitingForNext.append(completion) }
                return
            }
            if let completion { waitingForRunning.append(completion) }
            begin(store: store)
        }
    }

    private func begin(store: Store) {
        dispatchPrecondition(condition: .onQueue(queue))
        isRunning = true
        let journalBytes = store.journalBytes
        let layout = store.layout
        store.coordinate(Array(0..<layout.count), holding: false, perShard: { shard in
            shard.journal?.rotate(nextSequence: shard.state.sequence + 1)
        }) { [self] id, captured in
            let states = captured.compactMap { $0 }
            queue.async { [self] in
                let result = Result { () throws(JournalError) in
                    try SnapshotFile.write(
                        SnapshotFile.Contents(layout: layout, states: states, nextTransactionId: id),
                        to: files.snapshotPath)
                }
                if case .success = result {
                    for (shard, state) in zip(store.shards, states) {
                        shard.journal?.removeSegments(coveredThrough: state.sequence)
                    }
                    lastSnapshot = .now()
                    journalBytesAtLastSnapshot = journalBytes
                }
                finish(store: store, result: result)
            }
        }
    }

    private func finish(store: Store, result: Result<Void, JournalError>) {
        dispatchPrecondition(condition: .onQueue(queue))
        let completions = waitingForRunning
        waitingForRunning = waitingForNext
        waitingForNext = []
        isRunning = false
        for completion in completions { completion(result) }
        if nextRequested {
            nextRequested = false
            begin(store: store)
        }
    }
}

extension Store {
    /// Bytes appended to all journals since the store opened.
    var journalBytes: Int {
        shards.reduce(0) { $0 + ($1.journal?.appendedBytes ?? 0) }
    }

    /// Takes a snapshot now (one that starts after this call); `completion` runs once it is durable and the
    /// journal segments it covers are scheduled for deletion. A no-op for in-memory and read-only stores.
    public func takeSnapshot(completion: @escaping @Sendable (Result<Void, JournalError>) -> Void) {
        guard let persistence, !persistence.settings.readOnly else {
            completion(.success(()))
            return
        }
        persistence.request(store: self, completion: completion)
    }

    /// Shuts the store down: rejects new writes, takes a final snapshot, syncs and closes the journals and releases
    /// the directory lock. Blocks until done; call it from outside the store's queues (e.g. at process exit).
    ///
    /// - Throws: the first ``JournalError`` of the snapshot or of closing a journal.
    public func close() throws(JournalError) {
        guard !isClosed.exchange(true, ordering: .sequentiallyConsistent) else { return }
        guard let persistence else { return }
        defer { persistence.lock?.unlock() }
        guard !persistence.settings.readOnly else { return }
        persistence.stop()
        let outcome = Mutex<Result<Void, JournalError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        persistence.request(store: self) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        var failure: JournalError?
        for shard in shards {
            do throws(JournalError) {
                try shard.journal?.close()
            } catch {
                failure = failure ?? error
            }
        }
        if case .failure(let error)? = outcome.withLock({ $0 }) { throw error }
        if let failure { throw failure }
    }
}

extension Store {
    /// Test hook: stops the store as a crash would, after everything submitted so far was acknowledged: no final
    /// snapshot; journals are closed (their records are already written) and the lock is released.
    package func abandonForTesting() {
        guard !isClosed.exchange(true, ordering: .sequentiallyConsistent), let persistence else { return }
        persistence.stop()
        for shard in shards { try? shard.journal?.close() }
        persistence.lock?.unlock()
    }
}
