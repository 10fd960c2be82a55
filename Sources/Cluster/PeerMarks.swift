/// The last entry each other replica of a namespace announced it applied, and which of them the stream's leader was
/// found to hold: what lets a replica that lags borrow the checks of the replicas ahead of it.
///
/// ``LeaderGate`` checks a leader at the last position the replica applied. A replica that lags therefore passes a
/// leader whose copy went wrong after that position (NATS 2.9.10: a leader deposed by a partition came back leading
/// a copy without an entry the others had committed, docs/reliability.md), and applies that copy, while the
/// replicas ahead of it find the leader contradicting what they applied. Each replica announces the last entry it
/// applied (``JetStreamLog``, twice a second on a core NATS subject), and the gate requires the leader to hold every
/// peer's announced entry ahead of the replica's own before it lets anything through.
///
/// A peer can be the one that went wrong: its entry is then contradicted by every other leader. Once two different
/// leaders did not hold a peer's entry, its announcements are ignored for ``ignoreSeconds`` (the peer finds out by
/// its own checks and rebuilds), as a replica contradicted by two leaders takes itself to be wrong.
struct PeerMarks {
    /// One replica's last entry applied: its position and the message's id.
    struct Mark: Equatable, Sendable {
        let position: UInt64
        let id: String
    }

    /// How long the announcements of a peer found wrong are ignored.
    static let ignoreSeconds = 30.0
    /// How long a peer that stopped announcing is remembered.
    static let forgetSeconds = 60.0
    /// How many peers are remembered (a cluster has a few; each start of a node is a new one).
    static let capacity = 32

    private struct Peer {
        var mark: Mark
        var heardAt: Double
        /// Leaders found not holding this peer's marks since one was last found holding one.
        var contradictedBy: Set<String> = []
        var ignoredSince: Double?
    }

    private var peers: [String: Peer] = [:]
    /// The leader the marks below were checked with.
    private var checkedLeader: String?
    /// The marks that leader was found to hold, by peer.
    private var held: [String: Mark] = [:]

    /// `node` announced `mark` at `now`.
    mutating func announced(_ mark: Mark, by node: String, at now: Double) {
        if var peer = peers[node] {
            peer.mark = mark
            peer.heardAt = now
            peers[node] = peer
            return
        }
        peers = peers.filter { now - $0.value.heardAt < Self.forgetSeconds }
        guard peers.count < Self.capacity else { return }
        peers[node] = Peer(mark: mark, heardAt: now)
    }

    /// The marks `leader` must still be asked about at `now`: each heeded peer's mark beyond `position` (the
    /// replica's own last), unless `leader` was found to hold it already; the furthest first. A peer whose ignoring
    /// ran out is heeded afresh.
    mutating func unchecked(by leader: String, beyond position: UInt64, at now: Double) -> [(node: String, mark: Mark)] {
        if checkedLeader != leader {
            checkedLeader = leader
            held.removeAll()
        }
        let due = peers.filter { awaitsCheck($0.key, $0.value, beyond: position, at: now) }
        for node in due.keys where peers[node]?.ignoredSince != nil {
            peers[node]?.ignoredSince = nil
            peers[node]?.contradictedBy = []
        }
        return due.map { (node: $0.key, mark: $0.value.mark) }.sorted { $0.mark.position > $1.mark.position }
    }

    /// Whether a heeded peer's mark beyond `position` was not yet found held by the leader last checked with: a
    /// consumer trusted a moment ago is then checked again at once.
    func awaitCheck(beyond position: UInt64, at now: Double) -> Bool {
        peers.contains { awaitsCheck($0.key, $0.value, beyond: position, at: now) }
    }

    /// Whether `node`'s mark lies beyond `position`, was not found held by the leader last checked with, and the
    /// peer is heeded at `now` (never ignored, or ignored for ``ignoreSeconds`` already).
    private func awaitsCheck(_ node: String, _ peer: Peer, beyond position: UInt64, at now: Double) -> Bool {
        peer.mark.position > position && held[node] != peer.mark
            && peer.ignoredSince.map { now - $0 >= Self.ignoreSeconds } ?? true
    }

    /// `leader` holds `node`'s `mark` (or removed it below a snapshot).
    mutating func found(_ mark: Mark, of node: String, heldBy leader: String) {
        guard checkedLeader == leader else { return }
        held[node] = mark
        peers[node]?.contradictedBy = []
    }

    /// `leader` does not hold `node`'s `mark`. Returns whether the peer is still heeded: `false` once a second,
    /// different leader did not hold its marks either, and it is ignored from `now`.
    mutating func contradicted(_ mark: Mark, of node: String, by leader: String, at now: Double) -> Bool {
        guard var peer = peers[node] else { return false }
        peer.contradictedBy.insert(leader)
        let heeded = peer.contradictedBy.count < 2
        if !heeded { peer.ignoredSince = now }
        peers[node] = peer
        return heeded
    }
}
