import DataModel
import Dispatch
import Synchronization

/// What a clustered store keeps besides the log state (owned by the sequencer).
struct ReplicaState {
    /// The log position of the last entry applied.
    var appliedPosition: UInt64 = 0
    /// The number of this node's last proposal.
    var lastProposal: UInt64 = 0
    /// This node's proposals not applied yet, by number: each caller's range of the proposal's operations and
    /// what to do once they are applied (or failed).
    var waiting: [UInt64: [ProposalPart]] = [:]
    /// The proposal being gathered in this turn of the sequencer (its number is reserved), appended at the turn's
    /// end: the operations of every task of the turn travel as one message of the log.
    var gathering: (number: UInt64, entries: [[UInt8]], bytes: Int)?
    /// Reads and listens submitted while this node's proposals up to `after` were outstanding, in submission order.
    var deferred: [(after: UInt64, run: () -> Void)] = []
    /// Loading: the log position to reach before serving, when loading started (the store's clock), and whom
    /// to tell.
    var catchUp: (position: UInt64, started: Double, loaded: @Sendable (Result<LoadReport, JournalError>) -> Void)?
    /// Loading: the entries applied so far (after the snapshot restored, if any).
    var replayed = 0
    /// Counts the replica's followings of the log: deliveries of an earlier one are ignored (``Store/follow()``).
    var following: UInt64 = 0
    /// The snapshots this replica stored, and the last failure to store one.
    var snapshotsStored = 0
    var snapshotFailure: ReplicationError?
    /// Proposals that could not be decoded (written by an incompatible version); every replica skips them alike.
    var undecodable = 0
    /// The heartbeat and failure-detection timer, once this node armed an onDisconnect write.
    var presenceTimer: (any DispatchSourceTimer)?
    /// How many times this node was declared down while running, and took a new name (``Store/proposer``).
    var rejoins = 0
    /// Nodes this replica proposed as down, until that proposal is applied.
    var downProposed: Set<String> = []
    /// Each node's proposals are applied in the order it numbered them (``NodeOrder``).
    var nodeOrder = NodeOrder()
    /// Work submitted before the replica caught up, run in order once it has (``Store/submit(_:)``).
    var untilServing: [@Sendable () -> Void] = []
    /// Callers waiting for this replica to reach a log position (``Store/awaitLogHead(_:)``).
    var headWaiters: [(position: UInt64, then: @Sendable () -> Void)] = []
    /// Callers of ``Store/awaitLogHead(_:)`` for whom the log's head is still to be asked, and whether a question
    /// is on its way.
    var headAskers: [@Sendable () -> Void] = []
    var headQuestionInFlight = false
    /// This replica's recent checkpoints, and other replicas' not matched yet, by position (bounded).
    var checkpoints = CheckpointBook()

    var hasOutstandingProposals: Bool { !waiting.isEmpty }

    /// The lowest number among the outstanding proposals (every proposal below it is settled).
    var oldestOutstanding: UInt64? { waiting.keys.min() }
}

/// One caller's share of a proposal.
struct ProposalPart: Sendable {
    /// Its operations' positions in the proposal.
    let range: Range<Int>
    let settle: @Sendable (Result<ProposalResult, StoreError>) -> Void
}

/// What applying one caller's operations did.
struct ProposalResult: Sendable {
    /// One result per operation, in order: a write's (or an onDisconnect write's) outcome, `nil` for an operation
    /// that writes nothing.
    let writes: [Result<WriteOutcome, StoreError>?]
    /// The rules in force after the proposal.
    let rules: RulesRevision
}

extension Store {
    /// Opens the cluster's log, restores its newest snapshot and follows the log after it; the store serves (and
    /// `loaded` runs) once it applied everything the log held when it opened. On the sequencer.
    func startReplica(loaded: @escaping @Sendable (Result<LoadReport, JournalError>) -> Void) {
        guard let replication else { return }
        let started = clock()
        replication.open { [self] opened in
            queue.async { [self] in
                switch opened {
                case .failure(let error):
                    failLoading(.replicationFailed(error.description), loaded)
                case .success(let position):
                    replica.catchUp = (position, started, loaded)
                    replication.listenForCheckpoints { [self] checkpoint in
                        queue.async { [self] in compare(theirs: checkpoint) }
                    }
                    restoreLatestSnapshot()
                }
            }
        }
    }

    /// Ends loading with `failure`: every operation, held or later, is refused.
    func failLoading(_ failure: JournalError,
                     _ loaded: @escaping @Sendable (Result<LoadReport, JournalError>) -> Void)
    {
        replica.catchUp = nil
        fail(loading: failure)
        loaded(.failure(failure))
        runHeldWork()
    }

    /// Proposes `operations` to the cluster's log; `settle` runs once they were applied here at their place in the
    /// log (or could not be appended). On the sequencer.
    func propose(_ operations: [LogOperation],
                 settle: @escaping @Sendable (Result<ProposalResult, StoreError>) -> Void)
    {
        guard let replication else { return }
        let entries = operations.map(ProposalCodec.entry)
        let bytes = entries.reduce(0) { $0 + $1.count + 5 }
        let limit = replication.maxPayloadBytes - ProposalCodec.overheadBytes - proposer.utf8.count - 8
        guard bytes <= limit else {
            settle(.failure(.tooLarge(bytes: bytes, limit: limit)))
            return
        }
        if let gathering = replica.gathering,
            gathering.bytes + bytes > limit || gathering.entries.count >= Self.maxOperationsPerProposal
        {
            appendGathered()
        }
        if replica.gathering == nil {
            replica.lastProposal += 1
            replica.gathering = (replica.lastProposal, [], 0)
            queue.async { [self] in appendGathered() }
        }
        guard var gathering = replica.gathering else { return }
        let start = gathering.entries.count
        gathering.entries += entries
        gathering.bytes += bytes
        replica.gathering = gathering
        replica.waiting[gathering.number, default: []].append(
            ProposalPart(range: start..<gathering.entries.count, settle: settle))
    }

    /// Most operations one message of the log carries.
    static let maxOperationsPerProposal = 1024

    /// Appends the proposal gathered so far (in the turn that just ended, or before a read that must not see
    /// later writes). On the sequencer.
    func appendGathered() {
        guard let replication, let gathering = replica.gathering else { return }
        replica.gathering = nil
        let number = gathering.number
        let proposer = proposer
        let payload = ProposalCodec.encode(node: proposer, number: number, clock: clock(), entries: gathering.entries)
        replication.append(payload, id: Proposal.id(node: proposer, number: number)) { [self] _ in
            queue.async { [self] in
                guard proposer == self.proposer else { return }
                for part in replica.waiting.removeValue(forKey: number) ?? [] { part.settle(.failure(.unavailable)) }
                runSettledReads()
            }
        }
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
        let wasDeclaredDown = replica.nodeOrder.isForgotten(proposer)
        if let proposal {
            for ready in replica.nodeOrder.admit(proposal) { answers += apply(ready) }
        } else {
            replica.undecodable += 1
        }
        if replica.catchUp != nil { replica.replayed += 1 }
        // The task's events go to the loops first, then the answers: a writer sees its write's event before `ok`.
        finishTask { _ in }
        for answer in answers { answer() }
        if !wasDeclaredDown, replica.nodeOrder.isForgotten(proposer), replica.catchUp == nil { rejoin() }
        advanced(to: position)
        if position % checkpointInterval == 0 { takeCheckpoint(at: position) }
        if let replication, replication.snapshotInterval > 0, position % replication.snapshotInterval == 0,
            proposal?.node == proposer
        {
            storeSnapshot(at: position)
        }
    }

    /// What follows the replica reaching `position` (by an entry or a snapshot): settled reads run, loading
    /// finishes once caught up, and callers waiting for the position go on.
    func advanced(to position: UInt64) {
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
            let timestamp = max(state.timestamp, proposal.clock)
            // What the proposer could not know is decided here, at the entry's place: the rules version that judges
            // a write, and the version number of a rules revision (none when the text is already in force).
            let placed: LogOperation
            switch operation {
            case .write(let write, let caller, _):
                placed = .write(write, caller: caller, rulesVersion: state.rules.version)
            case .rules(let revision):
                guard revision.source != state.rules.source else {
                    results.append(nil)
                    continue
                }
                placed = .rules(RulesRevision(version: state.rules.version + 1, source: revision.source))
            case .armDisconnect, .disconnect, .heartbeat, .nodeDown:
                placed = operation
            }
            switch state.apply(LogEntry(sequence: state.sequence + 1, timestamp: timestamp, operation: placed)) {
            case .applied(let outcome, let record):
                observer?(record)
                results.append(.success(outcome))
            case .rejected(let error): results.append(.failure(error))
            case .rulesInstalled, .presenceChanged: results.append(nil)
            }
            if case .nodeDown(let node, _) = operation, state.presence.lastHeard[node] == nil {
                // Declared down: whatever it proposed and the log holds out of order is dropped (unanswered).
                replica.nodeOrder.forget(node)
            }
        }
        guard proposal.node == proposer, let parts = replica.waiting.removeValue(forKey: proposal.number)
        else { return [] }
        let rules = state.rules
        return parts.filter { $0.range.upperBound <= results.count }.map { part in
            { part.settle(.success(ProposalResult(writes: Array(results[part.range]), rules: rules))) }
        }
    }

    /// The name this replica proposes under: the log's node name, and a suffix once it had to rejoin.
    var proposer: String {
        replica.rejoins == 0 ? replication?.node ?? "" : "\(replication?.node ?? "").\(replica.rejoins)"
    }

    /// This node was declared down while it runs (its heartbeats did not reach the log within the silence
    /// bound, as can happen across a long leader election): every replica ran its armed onDisconnect writes and
    /// ignores whatever it proposes under its name. It proposes under a new name from now on, tells its owner
    /// (which closes its connections, so that their clients reconnect, send their unacknowledged writes again and
    /// arm their onDisconnect writes again), then fails what it had proposed and not seen applied: none of it was.
    private func rejoin() {
        replica.rejoins += 1
        replica.lastProposal = 0
        replica.gathering = nil
        let abandoned = replica.waiting.keys.sorted().flatMap { replica.waiting[$0] ?? [] }
        replica.waiting.removeAll()
        declaredDown?()
        for part in abandoned { part.settle(.failure(.unavailable)) }
        runSettledReads()
    }

    /// Cluster mode: runs `then` (on the sequencer) once this replica applied everything the log held when
    /// called, so a client that reconnects here from another node, or reads here what another node acknowledged,
    /// never sees older data than it saw there. At once on a single node (and when the log cannot tell its head:
    /// then as soon as possible). Callers that arrive while the log is being asked share the next question, so a
    /// namespace has at most two in flight however many read.
    public func awaitLogHead(_ then: @escaping @Sendable () -> Void) {
        guard replication != nil else {
            then()
            return
        }
        submit { [self] in
            replica.headAskers.append(then)
            askForLogHead()
        }
    }

    /// Asks the log for its head on behalf of everyone who asked since the last question was sent.
    private func askForLogHead() {
        guard let replication, !replica.headQuestionInFlight, !replica.headAskers.isEmpty else { return }
        let askers = replica.headAskers
        replica.headAskers.removeAll()
        replica.headQuestionInFlight = true
        replication.lastPosition { [self] result in
            queue.async { [self] in
                replica.headQuestionInFlight = false
                let head = (try? result.get()) ?? 0
                for then in askers {
                    if replica.appliedPosition >= head { then() } else { replica.headWaiters.append((head, then)) }
                }
                askForLogHead()
            }
        }
    }

    // MARK: - Divergence

    /// Hashes the tree as it is after `position` (off the sequencer: the tree is a value), announces it, and
    /// compares it with what the others announced for that position.
    private func takeCheckpoint(at position: UInt64) {
        guard let replication else { return }
        let root = state.root
        let node = replication.node
        DispatchQueue.global().async { [self] in
            let mine = Checkpoint(node: node, position: position, hash: Store.hash(of: root))
            replication.announce(mine)
            queue.async { [self] in
                for theirs in replica.checkpoints.recordMine(mine) where theirs.hash != mine.hash {
                    divergence?(mine, theirs)
                }
            }
        }
    }

    /// Compares another replica's checkpoint with this one's at the same position (now or once taken).
    private func compare(theirs: Checkpoint) {
        guard theirs.node != replication?.node else { return }
        if let mine = replica.checkpoints.recordTheirs(theirs), mine.hash != theirs.hash { divergence?(mine, theirs) }
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
        let seconds = max(0, clock() - catchUp.started) / 1000
        let replayed = replica.replayed
        report.withLock { report in
            report.replayedRecords = replayed
            report.seconds = seconds
        }
        finishLoading()
        startPresenceTimer()
        runHeldWork()
        catchUp.loaded(.success(loadReport))
    }

    // MARK: - onDisconnect across nodes

    /// Cluster mode: arms `write` (`nil`: disarms) as the onDisconnect write of connection `session` in every
    /// replica; `completion` runs once this replica applied it (at once, with `false`, on a single node).
    public func armDisconnect(session: String, write: StoreWrite?,
                              completion: @escaping @Sendable (Bool) -> Void)
    {
        submit { [self] in
            guard let replication, refusal() == nil else {
                completion(false)
                return
            }
            propose([.armDisconnect(node: proposer, session: session, write: write)]) { settled in
                completion((try? settled.get()) != nil)
            }
            startPresenceTimer()
        }
    }

    /// Cluster mode: connection `session` ended; its armed write runs at this place in the log. `completion` gets
    /// the write's result (`nil` when nothing was armed).
    public func fireDisconnect(session: String,
                               completion: @escaping @Sendable (Result<WriteOutcome, StoreError>?) -> Void)
    {
        submit { [self] in
            guard let replication, refusal() == nil else {
                completion(.failure(.unavailable))
                return
            }
            propose([.disconnect(node: proposer, session: session)]) { settled in
                switch settled {
                case .success(let result): completion(result.writes.first ?? nil)
                case .failure(let error): completion(.failure(error))
                }
            }
        }
    }

    /// Whether this store follows a cluster's log.
    public var isClustered: Bool { replication != nil }

    /// Starts the once-a-second presence work (once): heartbeats while this node has armed writes, and a
    /// `nodeDown` proposal for any node with armed writes silent for ``ClusterTiming/silenceMilliseconds``.
    func startPresenceTimer() {
        guard replica.presenceTimer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + ClusterTiming.heartbeatSeconds, repeating: ClusterTiming.heartbeatSeconds)
        timer.setEventHandler { [weak self] in self?.presenceTick() }
        timer.resume()
        replica.presenceTimer = timer
    }

    private func presenceTick() {
        guard replication != nil, refusal() == nil, replica.catchUp == nil else { return }
        let me = proposer
        if state.presence.armed[me] != nil {
            propose([.heartbeat(node: me)]) { _ in }
        }
        let now = max(state.timestamp, clock())
        for node in state.presence.nodesWithArmedWrites where node != me && !replica.downProposed.contains(node) {
            let heard = state.presence.lastHeard[node] ?? 0
            guard heard + ClusterTiming.silenceMilliseconds <= now else { continue }
            replica.downProposed.insert(node)
            propose([.nodeDown(node, silentFor: ClusterTiming.silenceMilliseconds)]) { [self] _ in
                queue.async { [self] in replica.downProposed.remove(node) }
            }
        }
    }
}

/// How quickly a cluster notices a dead node.
public enum ClusterTiming {
    /// A node with armed onDisconnect writes appends a heartbeat this often.
    public static let heartbeatSeconds = 1.0
    /// A node silent this long in the log is gone: its armed onDisconnect writes run (5 s, several missed
    /// heartbeats; the bound on firing is this plus one heartbeat period plus the log's latency).
    public static let silenceMilliseconds = 5_000.0
}

/// The checkpoints a replica keeps for comparing: its own of the last positions, and the others' that arrived
/// before its own (a replica that lags announces later). Bounded: older entries are dropped.
struct CheckpointBook {
    private static let kept = 32
    private var mine: [UInt64: Checkpoint] = [:]
    private var early: [UInt64: [Checkpoint]] = [:]

    /// Records this replica's checkpoint; returns the others' already received for its position.
    mutating func recordMine(_ checkpoint: Checkpoint) -> [Checkpoint] {
        mine[checkpoint.position] = checkpoint
        if mine.count > Self.kept, let oldest = mine.keys.min() { mine[oldest] = nil }
        return early.removeValue(forKey: checkpoint.position) ?? []
    }

    /// Records another replica's checkpoint; returns this replica's for the same position when it has one.
    mutating func recordTheirs(_ checkpoint: Checkpoint) -> Checkpoint? {
        if let own = mine[checkpoint.position] { return own }
        early[checkpoint.position, default: []].append(checkpoint)
        if early.count > Self.kept, let oldest = early.keys.min() { early[oldest] = nil }
        return nil
    }
}
