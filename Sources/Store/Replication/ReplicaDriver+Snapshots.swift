import DataModel
import Dispatch
import Synchronization

/// Cluster mode's snapshots: a replica starts from the newest snapshot the log holds instead of the log's first
/// entry, and the log drops what every replica can do without.
extension ReplicaDriver {
    /// Restores the log's newest snapshot when it is ahead of this replica, then follows the log after the
    /// replica's position. `missing` is the position a gap in the log skipped (the log removed it below a
    /// snapshot); a snapshot that does not cover it is asked for again a second later, once: if it still does
    /// not, the replica follows again from its position, and a gap the log still shows brings it back here. A
    /// gap is not always a removal (a delivery can stray), and no snapshot may ever cover it. On the sequencer.
    func restoreLatestSnapshot(missing: UInt64? = nil, askedAgain: Bool = false) {
        replica.following += 1
        let following = replica.following
        log.latestSnapshot { [self] result in
            sequencer.queue.async { [self] in
                guard following == replica.following else { return }
                switch result {
                case .success(let stored):
                    if let stored, stored.position > replica.appliedPosition {
                        do throws(JournalError) {
                            try restore(stored)
                        } catch {
                            guard let catchUp = replica.catchUp else { return retryRestoring(missing: missing) }
                            return failLoading(error, catchUp.loaded)
                        }
                    }
                    if let missing, replica.appliedPosition < missing, !askedAgain {
                        return retryRestoring(missing: missing)
                    }
                    follow()
                    advanced(to: replica.appliedPosition)
                case .failure:
                    // The log is unreachable for now (an election, a reconnect): ask again.
                    retryRestoring(missing: missing)
                }
            }
        }
    }

    private func retryRestoring(missing: UInt64?) {
        sequencer.queue.asyncAfter(deadline: .now() + 1) { [self] in
            guard !sequencer.isClosed.load(ordering: .relaxed) else { return }
            restoreLatestSnapshot(missing: missing, askedAgain: missing != nil)
        }
    }

    /// Follows the log after the replica's position; what an earlier following still delivers is ignored.
    private func follow() {
        let following = replica.following
        log.follow(after: replica.appliedPosition) { [self] position, payload in
            sequencer.queue.async { [self] in
                guard following == replica.following else { return }
                applyCommitted(position, payload)
            }
        }
    }

    /// Makes the snapshot the replica's sequencer.state. A serving replica reports the whole tree's change to its listeners
    /// and fails its own proposals the snapshot already includes (their outcome is in the snapshot, not known here).
    private func restore(_ stored: StoredSnapshot) throws(JournalError) {
        let snapshot: ReplicaSnapshot
        do throws(BinaryDecodingError) {
            snapshot = try ReplicaSnapshotCodec.decode(stored.bytes)
        } catch {
            throw .replicationFailed("snapshot at log position \(stored.position): \(error.reason) at \(error.offset)")
        }
        guard snapshot.position == stored.position else {
            throw .replicationFailed("snapshot stored at \(stored.position) says \(snapshot.position)")
        }
        let restored: LogState
        do throws(LogStateError) {
            restored = try LogState(root: snapshot.root, sequence: snapshot.sequence, timestamp: snapshot.timestamp,
                                    rules: snapshot.rules, presence: snapshot.presence, compiler: sequencer.compiler)
        } catch {
            throw .replicationFailed("snapshot at log position \(stored.position): \(error)")
        }
        let before = sequencer.state.root
        sequencer.state = restored
        replica.appliedPosition = snapshot.position
        replica.nodeOrder = snapshot.nodeOrder
        replica.undecodable = snapshot.undecodable
        guard replica.catchUp == nil else {
            sequencer.report.withLock { $0.loadedSnapshot = true; $0.snapshotPosition = snapshot.position }
            return
        }
        guard replica.rebuilding == nil else { return failIncluded(in: snapshot) }
        sequencer.observer?(ChangeRecord(sequence: sequencer.state.sequence,
                               changes: [Change(path: .root, oldValue: before, newValue: sequencer.state.root)]))
        sequencer.endTask()
        failIncluded(in: snapshot)
    }

    /// Fails this node's waiting proposals that `snapshot` includes: their outcome is in it, not known here.
    private func failIncluded(in snapshot: ReplicaSnapshot) {
        let next = snapshot.nodeOrder.next[proposer] ?? 1
        for number in replica.waiting.keys.sorted() where number < next {
            for part in replica.waiting.removeValue(forKey: number) ?? [] { part.settle(.failure(.unavailable)) }
        }
    }

    /// Encodes the replica's state after `position` (off the sequencer: every part is a value) and stores it in
    /// the log. The proposer of the entry at each interval's end does this, so one node stores each snapshot.
    func storeSnapshot(at position: UInt64) {
        let snapshot = ReplicaSnapshot(
            position: position, root: sequencer.state.root, sequence: sequencer.state.sequence,
            timestamp: sequencer.state.timestamp, rules: sequencer.state.rules, presence: sequencer.state.presence,
            nodeOrder: replica.nodeOrder,
            undecodable: replica.undecodable)
        let log = self.log
        // Best effort: a snapshot that could not be stored is taken again at the next interval.
        DispatchQueue.global().async {
            log.storeSnapshot(ReplicaSnapshotCodec.encode(snapshot), position: position) { _ in }
        }
    }
}
