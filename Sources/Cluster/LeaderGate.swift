import Synchronization

/// Lets through to a replica only what the stream's leader holds, in the order it holds it.
///
/// A consumer delivers from one server's copy of the stream, and NATS 2.9's copies can differ for good: a stream
/// leader paused (SIGSTOP, a frozen VM) and deposed keeps, on resuming, messages it had proposed but never
/// committed, at positions where the others hold other messages, and misses those (docs/reliability.md). So a
/// delivery passes only when its consumer is known to live on the stream leader, as learned within
/// ``freshSeconds`` (a paused or deposed server delivers only after a pause far longer than that, so its
/// deliveries find the knowledge stale and are checked again). Whenever it checks, the gate also compares the
/// leader's message at the last position it let through with the one it let through there: a difference means the
/// replica applied another copy's entries, or that the leader's copy is the one that went wrong. A copy goes wrong
/// while its server follows (the deposed leader catching up), and can be elected later; the replica only ever
/// applied leaders' copies. So the first leader found contradicting the replica is asked to step down, and the
/// replica waits; only when a second, different leader contradicts it too is the replica the one that is wrong, and
/// it rebuilds from the log.
///
/// A replica that lags checks more than its own last entry: the leader must also hold the last entry each other
/// replica announced it applied, where that is ahead (``PeerMarks``). A leader that does not is asked to step down,
/// as one that contradicts the replica itself.
///
/// Entries read from the stream by position (``admitRead(position:id:asking:)``: only the leader answers such a
/// read) pass the same checks, less the consumer's host, each time, and the leader must hold what was read.
final class LeaderGate: Sendable {
    /// How long the knowledge that a consumer lives on the leader is trusted.
    static let freshSeconds = 1.0

    /// What the gate asks the servers (each may block; `nil`: no answer now).
    struct Questions: Sendable {
        /// The server a consumer lives on.
        let consumerHost: @Sendable (_ consumer: String) -> String?
        /// The server leading the stream.
        let streamLeader: @Sendable () -> String?
        /// What the leader holds at a position.
        let message: @Sendable (_ position: UInt64) -> HeldMessage?
        /// Seconds of a monotonic clock.
        let now: @Sendable () -> Double
    }

    /// What the stream's leader holds at a position.
    enum HeldMessage: Equatable {
        /// The message with this id.
        case id(String)
        /// Nothing any more: removed below a snapshot.
        case removed
        /// Nothing yet: its copy ends before.
        case beyondEnd
    }

    /// What to do with a delivery.
    enum Verdict: Equatable {
        /// Hand it to the replica.
        case pass
        /// Drop it and follow again with a new consumer after position `after` (the last one let through), once
        /// the servers answer again: a question went unanswered, or the stream has no leader.
        case followAgain(after: UInt64)
        /// Drop it and follow again at once after position `after`: the consumer lives on a server that does not
        /// lead the stream (JetStream places a one-replica consumer on any of the stream's servers).
        case placedOffLeader(after: UInt64)
        /// The leader's copy contradicts the entries let through: ask it to step down, and follow again after
        /// position `after` once another leads.
        case leaderContradicts(String, after: UInt64)
        /// Two different leaders contradicted the entries let through: the replica must rebuild.
        case diverged(at: UInt64)
        /// The leader does not hold the entry replica `peer` announced it applied at `position`, ahead of this
        /// replica: ask it to step down, and follow again after position `after` once another leads.
        case leaderContradictsPeer(String, peer: String, position: UInt64, after: UInt64)
    }

    /// How long a leader distrusted (``distrustLeader(at:)``) passes nothing while it still leads.
    static let distrustSeconds = 30.0

    private struct State {
        /// The consumer last found on the leader, and when that was asked.
        var trusted: (consumer: String, since: Double)?
        /// Since when the leader is distrusted, and its name once known (`nil` while it is being asked).
        var distrusted: (since: Double, leader: String?)?
        /// The last position let through, and the id of its message.
        var last: (position: UInt64, id: String)?
        /// The leaders found contradicting the entries let through, since the last one that agreed.
        var contradicting: Set<String> = []
        /// The other replicas' last entries applied.
        var peers = PeerMarks()
    }

    private let state = Mutex(State())

    init() {}

    /// A new consumer follows after `position`: its first delivery is checked. What was let through at `position`
    /// is still compared with the leader's, unless the replica moved elsewhere (a snapshot, a rebuild).
    func restart(after position: UInt64) {
        state.withLock { state in
            state.trusted = nil
            if state.last?.position != position {
                state.last = nil
                state.contradicting = []
            }
        }
    }

    /// The replica found the entries it rebuilt from outvoted: from `now`, nothing passes from the stream's leader
    /// of the moment (named with ``distrusted(_:)``, once asked) until another leads, or for ``distrustSeconds``.
    func distrustLeader(at now: Double) {
        state.withLock { state in
            state.trusted = nil
            state.distrusted = (now, nil)
        }
    }

    /// The leader distrusted since the last ``distrustLeader(at:)`` is `leader`.
    func distrusted(_ leader: String) {
        state.withLock { state in
            if state.distrusted?.leader == nil { state.distrusted?.leader = leader }
        }
    }

    /// Replica `node` announced that the last entry it applied is `id`, at `position`.
    func peerApplied(node: String, position: UInt64, id: String, at now: Double) {
        state.withLock { $0.peers.announced(PeerMarks.Mark(position: position, id: id), by: node, at: now) }
    }

    /// Whether `leader` may not be followed at `now`: it is the one distrusted, or that one is not named yet. A
    /// distrust ends once another leads, or after ``distrustSeconds``.
    private func isDistrusted(_ leader: String, at now: Double) -> Bool {
        state.withLock { state in
            guard let distrusted = state.distrusted else { return false }
            guard now - distrusted.since < Self.distrustSeconds else {
                state.distrusted = nil
                return false
            }
            guard let named = distrusted.leader else { return true }
            if named == leader { return true }
            state.distrusted = nil
            return false
        }
    }

    /// Whether `consumer`'s delivery of message `id` at `position` may reach the replica (may ask the servers): asks
    /// once its knowledge is stale, or when another replica announced an entry ahead not yet checked.
    func admit(position: UInt64, id: String, consumer: String, asking questions: Questions) -> Verdict {
        let now = questions.now()
        let (trusted, last, marksAwait) = state.withLock { state in
            (state.trusted, state.last, state.peers.awaitCheck(beyond: state.last?.position ?? position - 1, at: now))
        }
        if let trusted, trusted.consumer == consumer, now - trusted.since < Self.freshSeconds, !marksAwait {
            return pass(position, id)
        }
        let after = last?.position ?? position - 1
        guard let leader = questions.streamLeader(), !leader.isEmpty, !isDistrusted(leader, at: now),
            let host = questions.consumerHost(consumer)
        else {
            return .followAgain(after: after)
        }
        guard host == leader else { return .placedOffLeader(after: after) }
        if let disagreement = disagreement(of: leader, with: last, after: after, asking: questions)
            ?? peerDisagreement(of: leader, after: after, asking: questions, at: now)
        {
            return disagreement
        }
        state.withLock { state in
            state.trusted = (consumer, now)
            state.contradicting = []
        }
        return pass(position, id)
    }

    /// Whether the entry `id` at `position`, which the stream's leader answered to a read by position, may reach
    /// the replica (asks the servers each time). Only the leader answers such a read, but a deposed leader that does
    /// not know it yet answers too, and leadership can move between two reads: NATS 2.9.10's copies can number the
    /// same entries differently (one holding an entry the others never stored shifts every later one), so two
    /// reads from two servers could skip an entry or apply one twice. So every read is checked: the stream must name
    /// a leader, not a distrusted one, holding the last entry let through as it was let through, and `id` at
    /// `position`; a leader holding another entry there answered after the read moved to it: read again.
    func admitRead(position: UInt64, id: String, asking questions: Questions) -> Verdict {
        let now = questions.now()
        let last = state.withLock { $0.last }
        let after = last?.position ?? position - 1
        guard let leader = questions.streamLeader(), !leader.isEmpty, !isDistrusted(leader, at: now) else {
            return .followAgain(after: after)
        }
        if let disagreement = disagreement(of: leader, with: last, after: after, asking: questions)
            ?? peerDisagreement(of: leader, after: after, asking: questions, at: now)
        {
            return disagreement
        }
        guard questions.message(position) == .id(id) else { return .followAgain(after: after) }
        state.withLock { $0.contradicting = [] }
        return pass(position, id)
    }

    /// What to do when `leader` does not hold `last` (the last entry let through) as it was let through; `nil`
    /// when it does, or when nothing was let through yet.
    private func disagreement(of leader: String, with last: (position: UInt64, id: String)?, after: UInt64,
                              asking questions: Questions) -> Verdict? {
        guard let last else { return nil }
        switch questions.message(last.position) {
        case nil: return .followAgain(after: after)
        case .id(let held) where held != last.id: return contradicted(by: leader, at: last.position)
        case .beyondEnd: return contradicted(by: leader, at: last.position)
        case .id, .removed: return nil
        }
    }

    /// What to do when `leader` does not hold the entry another replica announced it applied ahead of `after` (this
    /// replica's last); `nil` when it holds every one (each is asked once per leader), or the peers that it does
    /// not hold are the ones found wrong.
    private func peerDisagreement(of leader: String, after: UInt64, asking questions: Questions,
                                  at now: Double) -> Verdict? {
        let marks = state.withLock { $0.peers.unchecked(by: leader, beyond: after, at: now) }
        for (node, mark) in marks {
            switch questions.message(mark.position) {
            case nil:
                return .followAgain(after: after)
            case .id(mark.id), .removed:
                state.withLock { $0.peers.found(mark, of: node, heldBy: leader) }
            case .id, .beyondEnd:
                if state.withLock({ $0.peers.contradicted(mark, of: node, by: leader, at: now) }) {
                    return .leaderContradictsPeer(leader, peer: node, position: mark.position, after: after)
                }
            }
        }
        return nil
    }

    private func contradicted(by leader: String, at position: UInt64) -> Verdict {
        state.withLock { state in
            state.contradicting.insert(leader)
            guard state.contradicting.count < 2 else {
                state.contradicting = []
                return .diverged(at: position)
            }
            return .leaderContradicts(leader, after: position)
        }
    }

    private func pass(_ position: UInt64, _ id: String) -> Verdict {
        state.withLock { state in
            if position > state.last?.position ?? 0 { state.last = (position, id) }
        }
        return .pass
    }
}

