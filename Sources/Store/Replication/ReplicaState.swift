import DataModel
import Dispatch

/// What a ``ReplicaDriver`` keeps besides the log state (owned by the sequencer).
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
    /// Loading: the log position to reach before serving, when loading started (monotonic nanoseconds: a wall
    /// clock that jumps meanwhile must not change the duration reported), and whom to tell.
    var catchUp: (position: UInt64, started: UInt64, loaded: @Sendable (Result<LoadReport, JournalError>) -> Void)?
    /// Loading: the entries applied so far (after the snapshot restored, if any).
    var replayed = 0
    /// Counts the replica's followings of the log: deliveries of an earlier one are ignored (``ReplicaDriver/follow()``).
    var following: UInt64 = 0
    /// Proposals that could not be decoded (written by an incompatible version); every replica skips them alike.
    var undecodable = 0
    /// The heartbeat and failure-detection timer, once this node armed an onDisconnect write.
    var presenceTimer: (any DispatchSourceTimer)?
    /// How many times this node was declared down while running, and took a new name (``ReplicaDriver/proposer``).
    var rejoins = 0
    /// Nodes this replica proposed as down, until that proposal is applied.
    var downProposed: Set<String> = []
    /// For each other node with armed writes: the sequence number it was last heard at, and when (monotonic
    /// nanoseconds) this replica first saw that it was (``ReplicaDriver/presenceTick()``).
    var silences: [String: (lastHeard: UInt64, since: UInt64)] = [:]
    /// Each node's proposals are applied in the order it numbered them (``NodeOrder``).
    var nodeOrder = NodeOrder()
    /// Work submitted before the replica caught up, run in order once it has (``ReplicaDriver/run(_:)``).
    var untilServing: [@Sendable () -> Void] = []
    /// Callers waiting for this replica to reach a log position (``Store/awaitLogHead(resumingOn:_:)``).
    var headWaiters: [(position: UInt64, then: @Sendable () -> Void)] = []
    /// Callers of ``Store/awaitLogHead(resumingOn:_:)`` for whom the log's head is still to be asked, and whether a question
    /// is on its way.
    var headAskers: [@Sendable () -> Void] = []
    var headQuestionInFlight = false
    /// This replica's recent checkpoints, and other replicas' not matched yet, by position (bounded).
    var checkpoints = CheckpointBook()
    /// While the log is unreachable, the number of this episode (`nil` while it is reachable), and how many
    /// episodes began (ReplicaDriver+CutOff.swift).
    var cutOff: UInt64?
    var cutOffs: UInt64 = 0
    /// Tasks submitted while the log was unreachable, and those behind them, in order: they run once the replica
    /// holds a head the log told after they came.
    var heldWhileCutOff: [@Sendable () -> Void] = []
    /// The rebuild under way, if any, and how many were started (ReplicaDriver+Rebuild.swift).
    var rebuilding: Rebuild?
    var rebuilds = 0
    /// The highest position at which other replicas' checkpoints outvoted this one's and made it rebuild.
    var lastOutvotedRebuild: UInt64?
    /// Counts the times the replica dropped its tree to rebuild it, loading or not: a checkpoint hashed from a
    /// tree dropped since is stale.
    var treeResets: UInt64 = 0

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

/// The checkpoints a replica keeps for comparing: its own of the last positions, and every other replica's hash
/// there (a replica that lags announces later). Bounded: older positions are dropped.
struct CheckpointBook {
    private static let kept = 32
    private var mine: [UInt64: Checkpoint] = [:]
    /// Other replicas' hashes, by position and node.
    private var theirs: [UInt64: [String: String]] = [:]

    /// Records this replica's checkpoint; returns the others' already received for its position.
    mutating func recordMine(_ checkpoint: Checkpoint) -> [Checkpoint] {
        mine[checkpoint.position] = checkpoint
        if mine.count > Self.kept, let oldest = mine.keys.min() { mine[oldest] = nil }
        return (theirs[checkpoint.position] ?? [:]).sorted { $0.key < $1.key }.map { node, hash in
            Checkpoint(node: node, position: checkpoint.position, hash: hash)
        }
    }

    /// Forgets this replica's checkpoints (its tree is being rebuilt: they describe the tree it drops).
    mutating func forgetMine() {
        mine.removeAll()
    }

    /// Records another replica's checkpoint; returns this replica's for the same position when it has one.
    mutating func recordTheirs(_ checkpoint: Checkpoint) -> Checkpoint? {
        theirs[checkpoint.position, default: [:]][checkpoint.node] = checkpoint.hash
        if theirs.count > Self.kept, let oldest = theirs.keys.min() { theirs[oldest] = nil }
        return mine[checkpoint.position]
    }

    /// Whether more replicas announced one other hash at `position` than hold this replica's hash there (this one
    /// included).
    func isOutvoted(at position: UInt64) -> Bool {
        guard let own = mine[position]?.hash else { return false }
        var counts: [String: Int] = [own: 1]
        for hash in (theirs[position] ?? [:]).values { counts[hash, default: 0] += 1 }
        let agreeing = counts[own] ?? 1
        return counts.contains { hash, count in hash != own && count > agreeing }
    }
}
