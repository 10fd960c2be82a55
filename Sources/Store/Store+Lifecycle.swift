import Synchronization

extension Store {
    /// Takes a snapshot now (one that starts after this call); `completion` runs once it is durable and the
    /// journal segments it covers are scheduled for deletion. A no-op for in-memory, read-only and clustered stores
    /// (a replica stores snapshots in the cluster's log, every ``ReplicatedLog/snapshotInterval`` positions).
    public func takeSnapshot(completion: @escaping @Sendable (Result<Void, JournalError>) -> Void) {
        driver.takeSnapshot(completion: completion)
    }

    /// Shuts the store down: rejects new writes; with a journal, takes a final snapshot, syncs and closes the
    /// journal and releases the directory lock. Blocks until done; call it from outside the store's queues (e.g. at
    /// process exit).
    ///
    /// - Throws: the first ``JournalError`` of the snapshot or of closing the journal.
    public func close() throws(JournalError) {
        guard !sequencer.isClosed.exchange(true, ordering: .sequentiallyConsistent) else { return }
        try driver.close()
    }

    /// Test hook: stops the store as a crash would, after everything submitted so far was acknowledged: no final
    /// snapshot; the journal is closed (its records are already written) and the lock is released.
    package func abandonForTesting() {
        guard !sequencer.isClosed.exchange(true, ordering: .sequentiallyConsistent) else { return }
        driver.abandon()
    }
}
