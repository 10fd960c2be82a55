import DataModel
import Dispatch
import Synchronization

/// A cluster node's ``LogDriver``: the store applies nothing directly. Each turn of the sequencer, the operations of
/// its tasks (writes, rules revisions, onDisconnect arming and firing) are gathered into one ``Proposal`` appended
/// to the cluster's ``ReplicatedLog``, and the replica applies the log's entries in the log's order, its own among
/// everyone's, with the same pure transition as a single node. A caller's completion runs once its operations were
/// applied here at their place in the log. The replica keeps its tree in memory (the log and its snapshots are what
/// is durable); at start it restores the log's newest snapshot and catches up with the log before serving.
///
/// Every `var` of the driver (``ReplicaState``) is owned by the sequencer.
final class ReplicaDriver: LogDriver, @unchecked Sendable {
    let sequencer: Sequencer
    let log: any ReplicatedLog
    /// Hash the tree every this many positions, and whom to tell of a divergence.
    let checkpointInterval: UInt64
    let divergence: (@Sendable (Checkpoint, Checkpoint) -> Void)?
    /// Whom to tell when the log declared this node down while it runs.
    let declaredDown: (@Sendable () -> Void)?
    /// Whom to tell when the replica rebuilds its tree from the log (and why).
    let rebuilt: (@Sendable (String) -> Void)?
    /// Whom to tell that the node has been cut off from the log for a while, or reaches it again.
    let cutOffNotice: (@Sendable (Bool) -> Void)?
    /// Whether ``cutOffNotice`` was last told `true` (read from any thread).
    let toldCutOff = Atomic<Bool>(false)
    /// Owned by the sequencer.
    var replica = ReplicaState()

    init(sequencer: Sequencer, log: any ReplicatedLog, configuration: StoreConfiguration) {
        self.sequencer = sequencer
        self.log = log
        checkpointInterval = max(1, configuration.checkpointInterval)
        divergence = configuration.divergence
        declaredDown = configuration.declaredDown
        rebuilt = configuration.replicaRebuilt
        cutOffNotice = configuration.cutOff
    }

    // MARK: - LogDriver

    func load(loaded: @escaping @Sendable (Result<LoadReport, JournalError>) -> Void) {
        startReplica(loaded: loaded)
    }

    /// Until the replica caught up with its log, tasks are held (in submission order), so nothing is proposed or
    /// answered before the replica holds everything the log held when it opened; so are they during a rebuild, and
    /// while the node is cut off from the log (ReplicaDriver+CutOff.swift).
    func run(_ task: @escaping @Sendable () -> Void) {
        if (!sequencer.isLoaded && !sequencer.hasFailed) || replica.rebuilding != nil {
            replica.untilServing.append(task)
        } else if replica.cutOff != nil || !replica.heldWhileCutOff.isEmpty {
            holdUntilLogHead(task)
        } else {
            task()
        }
    }

    /// A read answers only once this node's writes proposed before it are applied; writes proposed after it go
    /// into a later message, so it does not wait for (nor see) them.
    func runRead(_ read: @escaping () -> Void) {
        if replica.rebuilding != nil {
            replica.rebuilding?.reads.append(read)
            return
        }
        guard replica.hasOutstandingProposals else { return read() }
        appendGathered()
        replica.deferred.append((after: replica.lastProposal, run: read))
    }

    /// A replica's tasks end themselves: a write's events and completion follow the log, not the turn.
    func endTurn() {}

    /// At once: nothing of the turn waits on this node.
    func settleRefused(_ completion: @escaping @Sendable () -> Void) { completion() }

    /// Another node may have acknowledged writes this replica has not applied yet.
    var publishesCurrent: Bool { false }

    var isCutOff: Bool { toldCutOff.load(ordering: .relaxed) }

    func refusal() -> StoreError? {
        sequencer.isRefusing ? .unavailable : nil
    }

    func write(_ write: StoreWrite, by caller: WriteCaller,
               completion: @escaping @Sendable (Result<WriteOutcome, StoreError>) -> Void)
    {
        propose([.write(write, caller: caller, rulesVersion: 0)]) { settled in
            completion(settled.flatMap { ($0.writes.first ?? nil) ?? .failure(.unavailable) })
        }
    }

    func write(batch writes: [StoreWrite], by caller: WriteCaller,
               completion: @escaping @Sendable (Int, Result<WriteOutcome, StoreError>) -> Void)
    {
        propose(writes.map { .write($0, caller: caller, rulesVersion: 0) }) { settled in
            for index in writes.indices {
                completion(index, settled.flatMap { result in
                    (result.writes.indices.contains(index) ? result.writes[index] : nil) ?? .failure(.unavailable)
                })
            }
        }
    }

    func installRules(source: [UInt8]?, completion: (@Sendable (Result<RulesRevision, StoreError>) -> Void)?) {
        propose([.rules(RulesRevision(version: 0, source: source))]) { settled in
            completion?(settled.map(\.rules))
        }
    }

    /// Asks the log for its head, and resumes once this replica holds it (while the log cannot tell, the question
    /// is asked again: a replica cut off from the log answers nobody); callers that arrive while it is being asked
    /// share the next question.
    func awaitLogHead(resumingOn hop: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
                      _ then: @escaping @Sendable () -> Void)
    {
        submit { [self] in
            replica.headAskers.append { hop(then) }
            askForLogHead()
        }
    }

    /// Arms the write in every replica through the log, and starts the heartbeats that keep it from running while
    /// this node lives.
    func armDisconnect(session: String, write: StoreWrite?, completion: @escaping @Sendable (Bool) -> Void) {
        submit { [self] in
            guard refusal() == nil else { return completion(false) }
            propose([.armDisconnect(node: proposer, session: session, write: write)]) { settled in
                completion((try? settled.get()) != nil)
            }
            startPresenceTimer()
        }
    }

    /// The armed write runs in every replica at the `disconnect` entry's place in the log.
    func fireDisconnect(session: String,
                        completion: @escaping @Sendable (Result<WriteOutcome, StoreError>?) -> Void)
    {
        guard refusal() == nil else { return completion(.failure(.unavailable)) }
        propose([.disconnect(node: proposer, session: session)]) { settled in
            switch settled {
            case .success(let result): completion(result.writes.first ?? nil)
            case .failure(let error): completion(.failure(error))
            }
        }
    }

    /// Snapshots are stored in the log, by the replica that proposed each interval's last entry.
    func takeSnapshot(completion: @escaping @Sendable (Result<Void, JournalError>) -> Void) {
        completion(.success(()))
    }

    /// Nothing to flush: the log holds every acknowledged entry.
    func close() throws(JournalError) {}

    func abandon() {}

    /// Runs `body` as a task of the store (held until the replica serves).
    private func submit(_ body: @escaping @Sendable () -> Void) {
        sequencer.queue.async { [self] in run(body) }
    }

    // MARK: - Proposing

    /// Proposes `operations` to the cluster's log; `settle` runs once they were applied here at their place in the
    /// log (or could not be appended). On the sequencer.
    func propose(_ operations: [LogOperation],
                 settle: @escaping @Sendable (Result<ProposalResult, StoreError>) -> Void)
    {
        let entries = operations.map(ProposalCodec.entry)
        let bytes = entries.reduce(0) { $0 + $1.count + 5 }
        let limit = log.maxPayloadBytes - ProposalCodec.overheadBytes - proposer.utf8.count - 8
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
            sequencer.queue.async { [self] in appendGathered() }
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
        guard let gathering = replica.gathering else { return }
        replica.gathering = nil
        let number = gathering.number
        let proposer = proposer
        let payload = ProposalCodec.encode(node: proposer, number: number, clock: sequencer.clock(), entries: gathering.entries)
        log.append(payload, id: Proposal.id(node: proposer, number: number)) { [self] _ in
            sequencer.queue.async { [self] in
                guard proposer == self.proposer else { return }
                for part in replica.waiting.removeValue(forKey: number) ?? [] { part.settle(.failure(.unavailable)) }
                runSettledReads()
            }
        }
    }
}
