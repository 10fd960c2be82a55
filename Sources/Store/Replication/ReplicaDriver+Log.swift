import DataModel
import Dispatch
import Synchronization

/// How a replica follows the cluster's log: catching up at start, applying each entry in the log's order, answering
/// its own callers, rejoining under a new name, comparing checkpoints.
extension ReplicaDriver {
    /// Opens the cluster's log, restores its newest snapshot and follows the log after it; the store serves (and
    /// `loaded` runs) once it applied everything the log held when it opened. On the sequencer.
    func startReplica(loaded: @escaping @Sendable (Result<LoadReport, JournalError>) -> Void) {
        let started = DispatchTime.now().uptimeNanoseconds
        log.open { [self] opened in
            sequencer.queue.async { [self] in
                switch opened {
                case .failure(let error):
                    failLoading(.replicationFailed(error.description), loaded)
                case .success:
                    askForCatchUpTarget(started: started, loaded: loaded)
                }
            }
        }
    }

    /// Asks the log for its head, as every reader does (the stream's state as the opening server reported it can
    /// be stale: docs/reliability.md), until it tells; then catches up to it. While the log cannot tell (no
    /// majority of its servers reachable), the store does not load: it could only serve a replica that may lag.
    /// `started` is when loading began, in monotonic nanoseconds.
    private func askForCatchUpTarget(started: UInt64,
                                     loaded: @escaping @Sendable (Result<LoadReport, JournalError>) -> Void)
    {
        log.lastPosition { [self] result in
            sequencer.queue.async { [self] in
                guard case .success(let position) = result else {
                    sequencer.queue.asyncAfter(deadline: .now() + Self.headRetryDelay) { [self] in
                        askForCatchUpTarget(started: started, loaded: loaded)
                    }
                    return
                }
                replica.catchUp = (position, started, loaded)
                log.listenForCheckpoints { [self] checkpoint in
                    sequencer.queue.async { [self] in compare(theirs: checkpoint) }
                }
                log.watchDivergence { [self] in
                    sequencer.queue.async { [self] in
                        rebuild("the log found this replica's entries differ from the stream leader's")
                    }
                }
                log.watchReachability { [weak self] reachable in
                    guard let self else { return }
                    sequencer.queue.async { [self] in reachabilityChanged(reachable) }
                }
                restoreLatestSnapshot()
            }
        }
    }

    /// Ends loading with `failure`: every operation, held or later, is refused.
    func failLoading(_ failure: JournalError,
                     _ loaded: @escaping @Sendable (Result<LoadReport, JournalError>) -> Void)
    {
        replica.catchUp = nil
        sequencer.fail(loading: failure)
        loaded(.failure(failure))
        runHeldWork()
    }

    /// Applies the log's entry at `position`: every operation of its proposal in order, each with the next
    /// sequence number, the time `max(previous, proposer's clock)` and the rules in force here. Replicas that apply
    /// the same entries reach the same tree and decisions. An entry beyond the next position means the log removed
    /// entries this replica still needed (below a snapshot): it restores the snapshot instead. On the sequencer.
    func applyCommitted(_ position: UInt64, _ payload: [UInt8]) {
        guard position > replica.appliedPosition else { return }
        guard position == replica.appliedPosition + 1 else {
            restoreLatestSnapshot(missing: replica.appliedPosition + 1)
            return
        }
        replica.appliedPosition = position
        var answers: [() -> Void] = []
        let proposal = try? ProposalCodec.decode(payload)
        let barrier = proposal == nil ? LogBarrier.node(of: payload) : nil
        let recorded = proposal == nil && barrier == nil ? LogCheckpoint.checkpoint(of: payload) : nil
        let wasDeclaredDown = replica.nodeOrder.isForgotten(proposer)
        if let proposal {
            for ready in replica.nodeOrder.admit(proposal) { answers += apply(ready) }
        } else if let recorded {
            compare(theirs: recorded)
        } else if barrier == nil {
            replica.undecodable += 1
        }
        if replica.catchUp != nil { replica.replayed += 1 }
        if replica.rebuilding != nil {
            // Held until the rebuilt tree's change reaches the listeners (ReplicaDriver+Rebuild.swift).
            replica.rebuilding?.answers += answers
        } else {
            // The task's events go to the loops first, then the answers: a writer sees its write's event before `ok`.
            sequencer.endTask()
            for answer in answers { answer() }
            if !wasDeclaredDown, replica.nodeOrder.isForgotten(proposer), replica.catchUp == nil { rejoin() }
        }
        advanced(to: position)
        if position % checkpointInterval == 0 { takeCheckpoint(at: position) }
        if log.snapshotInterval > 0, position % log.snapshotInterval == 0,
            proposal.map({ $0.node == proposer }) ?? ((barrier ?? recorded?.node) == log.node)
        {
            storeSnapshot(at: position)
        }
    }

    /// What follows the replica reaching `position` (by an entry or a snapshot): settled reads run, loading
    /// finishes once caught up, and callers waiting for the position go on.
    func advanced(to position: UInt64) {
        guard replica.rebuilding == nil else { return finishRebuildWhenCaughtUp() }
        runSettledReads()
        checkCaughtUp()
        if !replica.headWaiters.isEmpty {
            let reached = replica.headWaiters.filter { $0.position <= position }
            replica.headWaiters.removeAll { $0.position <= position }
            for waiter in reached { waiter.then() }
        }
    }

    /// Applies one proposal's operations; returns the answers to this node's callers among them, to run once the
    /// task's events were handed off.
    private func apply(_ proposal: Proposal) -> [() -> Void] {
        var results: [Result<WriteOutcome, StoreError>?] = []
        for operation in proposal.operations {
            let timestamp = max(sequencer.state.timestamp, proposal.clock)
            // What the proposer could not know is decided here, at the entry's place: the rules version that judges
            // a write, and the version number of a rules revision (none when the text is already in force).
            let placed: LogOperation
            switch operation {
            case .write(let write, let caller, _):
                placed = .write(write, caller: caller, rulesVersion: sequencer.state.rules.version)
            case .rules(let revision):
                guard revision.source != sequencer.state.rules.source else {
                    results.append(nil)
                    continue
                }
                placed = .rules(RulesRevision(version: sequencer.state.rules.version + 1, source: revision.source))
            case .armDisconnect, .disconnect, .heartbeat, .nodeDown:
                placed = operation
            }
            switch sequencer.state.apply(LogEntry(sequence: sequencer.state.sequence + 1, timestamp: timestamp, operation: placed)) {
            case .applied(let outcome, let record):
                if replica.rebuilding == nil { sequencer.observer?(record) }
                results.append(.success(outcome))
            case .rejected(let error): results.append(.failure(error))
            case .rulesInstalled, .presenceChanged: results.append(nil)
            }
            if case .nodeDown(let node, _) = operation, sequencer.state.presence.lastHeard[node] == nil {
                // Declared down: whatever it proposed and the log holds out of order is dropped (unanswered).
                replica.nodeOrder.forget(node)
            }
        }
        guard proposal.node == proposer, let parts = replica.waiting.removeValue(forKey: proposal.number)
        else { return [] }
        let rules = sequencer.state.rules
        return parts.filter { $0.range.upperBound <= results.count }.map { part in
            { part.settle(.success(ProposalResult(writes: Array(results[part.range]), rules: rules))) }
        }
    }

    /// The name this replica proposes under: the log's node name, and a suffix once it had to rejoin.
    var proposer: String {
        replica.rejoins == 0 ? log.node : "\(log.node).\(replica.rejoins)"
    }

    /// This node was declared down while it runs (its heartbeats did not reach the log within the silence
    /// bound, as can happen across a long leader election): every replica ran its armed onDisconnect writes and
    /// ignores whatever it proposes under its name. It proposes under a new name from now on, tells its owner
    /// (which closes its connections, so that their clients reconnect, send their unacknowledged writes again and
    /// arm their onDisconnect writes again), then fails what it had proposed and not seen applied: none of it was.
    func rejoin() {
        replica.rejoins += 1
        replica.lastProposal = 0
        replica.gathering = nil
        let abandoned = replica.waiting.keys.sorted().flatMap { replica.waiting[$0] ?? [] }
        replica.waiting.removeAll()
        declaredDown?()
        for part in abandoned { part.settle(.failure(.unavailable)) }
        runSettledReads()
    }

    /// How long to wait before asking the log for its head again after it could not tell.
    static let headRetryDelay = DispatchTimeInterval.milliseconds(100)

    /// Asks the log for its head on behalf of everyone who asked since the last question was sent.
    func askForLogHead() {
        guard !replica.headQuestionInFlight, !replica.headAskers.isEmpty else { return }
        let askers = replica.headAskers
        replica.headAskers.removeAll()
        replica.headQuestionInFlight = true
        log.lastPosition { [self] result in
            sequencer.queue.async { [self] in
                replica.headQuestionInFlight = false
                guard case .success(let head) = result else {
                    // The log cannot tell now (its servers unreachable, no stream leader): this replica may be
                    // behind, so nobody is answered from it. The askers wait, ahead of later ones, and the question
                    // is asked again; they are answered once the log tells its head and the replica holds it.
                    replica.headAskers = askers + replica.headAskers
                    sequencer.queue.asyncAfter(deadline: .now() + Self.headRetryDelay) { [self] in askForLogHead() }
                    return
                }
                for then in askers {
                    if replica.appliedPosition >= head { then() } else { replica.headWaiters.append((head, then)) }
                }
                askForLogHead()
            }
        }
    }

    // MARK: - Divergence

    /// Hashes the tree as it is after `position` (off the sequencer: the tree is a value), announces it, and
    /// compares it with what the others announced for that position. A replica that applied `position` while
    /// serving also records its hash in the log (``LogCheckpoint``), for replicas that replay it later; one
    /// catching up or rebuilding does not: it may be replaying a copy that went wrong.
    private func takeCheckpoint(at position: UInt64) {
        let root = sequencer.state.root
        let node = log.node
        let recordsInLog = replica.catchUp == nil && replica.rebuilding == nil
        let tree = replica.treeResets
        // Unique per tree: a replica that rebuilt records its new hash at a position it recorded before.
        let id = "\(node)-c\(position).\(tree)"
        DispatchQueue.global().async { [self] in
            let mine = Checkpoint(node: node, position: position, hash: Store.hash(of: root))
            log.announce(mine)
            if recordsInLog { log.append(LogCheckpoint.payload(mine), id: id, failed: { _ in }) }
            sequencer.queue.async { [self] in
                guard replica.treeResets == tree else { return }  // hashed from a tree dropped since
                for theirs in replica.checkpoints.recordMine(mine) where theirs.hash != mine.hash {
                    divergence?(mine, theirs)
                }
                rebuildIfOutvoted(at: position)
            }
        }
    }

    /// Compares another replica's checkpoint with this one's at the same position (now or once taken).
    private func compare(theirs: Checkpoint) {
        guard theirs.node != log.node else { return }
        if let mine = replica.checkpoints.recordTheirs(theirs), mine.hash != theirs.hash {
            divergence?(mine, theirs)
            rebuildIfOutvoted(at: theirs.position)
        }
    }

    /// Rebuilds when more replicas agree on another tree at `position` than on this one's (with two replicas,
    /// neither can tell which is wrong: both only report). Outvoted again at a position its last rebuild replayed,
    /// the replica rebuilt from a copy of the log that is itself wrong: the log is told to stop serving from it
    /// (``ReplicatedLog/distrustSource()``) before the next rebuild.
    private func rebuildIfOutvoted(at position: UInt64) {
        guard replica.checkpoints.isOutvoted(at: position) else { return }
        if let replayed = replica.lastOutvotedRebuild, position <= replayed { log.distrustSource() }
        replica.lastOutvotedRebuild = max(position, replica.lastOutvotedRebuild ?? 0)
        rebuild("at log position \(position), more replicas agree on another tree than on this one's")
    }

    /// Runs, in order, what was submitted while the replica was catching up (refused when loading failed).
    func runHeldWork() {
        let held = replica.untilServing
        replica.untilServing.removeAll()
        for work in held { work() }
    }

    /// Runs the deferred reads whose earlier proposals are all settled, in order.
    func runSettledReads() {
        let oldest = replica.oldestOutstanding
        while let first = replica.deferred.first, oldest.map({ first.after < $0 }) ?? true {
            replica.deferred.removeFirst()
            first.run()
        }
    }

    /// Finishes loading once the replica reached the position the log had when it opened.
    private func checkCaughtUp() {
        guard let catchUp = replica.catchUp, replica.appliedPosition >= catchUp.position else { return }
        replica.catchUp = nil
        let seconds = max(0, Double(DispatchTime.now().uptimeNanoseconds) - Double(catchUp.started)) / 1e9
        let replayed = replica.replayed
        sequencer.report.withLock { report in
            report.replayedRecords = replayed
            report.seconds = seconds
        }
        sequencer.finishLoading()
        startPresenceTimer()
        runHeldWork()
        catchUp.loaded(.success(sequencer.report.withLock { $0 }))
    }
}
