@testable import Cluster
import Synchronization
import Testing

/// The servers as a test scripts them for a ``LeaderGate``: who leads, where each consumer lives, what the leader
/// holds, and the clock; counts the questions asked.
final class ScriptedServers: Sendable {
    struct Script {
        var leader: String? = "n1"
        var hosts: [String: String] = [:]
        var held: [UInt64: LeaderGate.HeldMessage] = [:]
        var now = 100.0
        var questions = 0
    }

    let script = Mutex(Script())

    var questions: LeaderGate.Questions {
        LeaderGate.Questions(
            consumerHost: { consumer in
                self.script.withLock { script in
                    script.questions += 1
                    return script.hosts[consumer]
                }
            },
            streamLeader: {
                self.script.withLock { script in
                    script.questions += 1
                    return script.leader
                }
            },
            message: { position in
                self.script.withLock { script in
                    script.questions += 1
                    return script.held[position]
                }
            },
            now: { self.script.withLock { $0.now } })
    }
}

@Suite("Only what the stream leader holds reaches a replica")
struct LeaderGateTests {
    @Test("a consumer on the leader passes; the gate asks again only once its knowledge is stale")
    func consumerOnTheLeader() {
        let servers = ScriptedServers()
        servers.script.withLock { $0.hosts = ["c1": "n1"] }
        let gate = LeaderGate()
        #expect(gate.admit(position: 1, id: "a-1", consumer: "c1", asking: servers.questions) == .pass)
        let asked = servers.script.withLock { $0.questions }
        #expect(gate.admit(position: 2, id: "a-2", consumer: "c1", asking: servers.questions) == .pass)
        #expect(servers.script.withLock { $0.questions } == asked, "asked again while fresh")
        servers.script.withLock { $0.now += LeaderGate.freshSeconds; $0.held[2] = .id("a-2") }
        #expect(gate.admit(position: 3, id: "a-3", consumer: "c1", asking: servers.questions) == .pass)
        #expect(servers.script.withLock { $0.questions } > asked)
    }

    @Test("a consumer off the leader is replaced at once, one no server knows after a wait: after the last let through")
    func consumerElsewhere() {
        let servers = ScriptedServers()
        servers.script.withLock { $0.hosts = ["c1": "n1", "c2": "n2"]; $0.held[1] = .id("a-1") }
        let gate = LeaderGate()
        #expect(gate.admit(position: 1, id: "a-1", consumer: "c1", asking: servers.questions) == .pass)
        #expect(gate.admit(position: 2, id: "x-9", consumer: "c2", asking: servers.questions)
            == .placedOffLeader(after: 1))
        #expect(gate.admit(position: 2, id: "x-9", consumer: "c9", asking: servers.questions) == .followAgain(after: 1),
                "a consumer no server knows")
        servers.script.withLock { $0.leader = nil }
        #expect(gate.admit(position: 2, id: "a-2", consumer: "c3", asking: servers.questions) == .followAgain(after: 1))
        // Knowledge goes stale: a deposed leader's consumer, delivering after a pause, is checked again.
        servers.script.withLock { $0.leader = "n2"; $0.now += 7 }
        #expect(gate.admit(position: 2, id: "x-9", consumer: "c1", asking: servers.questions)
            == .placedOffLeader(after: 1))
    }

    @Test("a leader whose message at the last position differs is asked to step down; a second one means divergence")
    func contradiction() {
        let servers = ScriptedServers()
        servers.script.withLock { $0.hosts = ["c1": "n1", "c2": "n1", "c3": "n2"]; $0.held = [4: .id("real-4")] }
        let gate = LeaderGate()
        #expect(gate.admit(position: 4, id: "forged-4", consumer: "c1", asking: servers.questions) == .pass)
        #expect(gate.admit(position: 5, id: "a-5", consumer: "c2", asking: servers.questions)
            == .leaderContradicts("n1", after: 4))
        // The same leader again changes nothing; another leader whose copy ends before it contradicts too.
        #expect(gate.admit(position: 5, id: "a-5", consumer: "c2", asking: servers.questions)
            == .leaderContradicts("n1", after: 4))
        servers.script.withLock { $0.leader = "n2"; $0.held = [4: .beyondEnd] }
        #expect(gate.admit(position: 5, id: "a-5", consumer: "c3", asking: servers.questions) == .diverged(at: 4))
        // Restarting elsewhere (the replica rebuilt) forgets what was let through.
        gate.restart(after: 0)
        #expect(gate.admit(position: 1, id: "a-1", consumer: "c3", asking: servers.questions) == .pass)
    }

    @Test("a leader that agrees clears an earlier contradiction: only two in a row make a divergence")
    func agreementClears() {
        let servers = ScriptedServers()
        servers.script.withLock { $0.hosts = ["c1": "n1", "c2": "n1", "c3": "n2", "c4": "n3"]; $0.held = [4: .id("x")] }
        let gate = LeaderGate()
        #expect(gate.admit(position: 4, id: "a-4", consumer: "c1", asking: servers.questions) == .pass)
        #expect(gate.admit(position: 5, id: "a-5", consumer: "c2", asking: servers.questions)
            == .leaderContradicts("n1", after: 4))
        servers.script.withLock { $0.leader = "n2"; $0.held = [4: .id("a-4")] }
        #expect(gate.admit(position: 5, id: "a-5", consumer: "c3", asking: servers.questions) == .pass)
        servers.script.withLock { $0.leader = "n3"; $0.held = [5: .id("y")] }
        #expect(gate.admit(position: 6, id: "a-6", consumer: "c4", asking: servers.questions)
            == .leaderContradicts("n3", after: 5))
    }

    @Test("the same message, or one removed below a snapshot, at the last position lets the new consumer through")
    func continuity() {
        let servers = ScriptedServers()
        servers.script.withLock { $0.hosts = ["c1": "n1", "c2": "n1", "c3": "n1"]; $0.held = [7: .id("a-7"), 8: .removed] }
        let gate = LeaderGate()
        #expect(gate.admit(position: 7, id: "a-7", consumer: "c1", asking: servers.questions) == .pass)
        gate.restart(after: 7)
        #expect(gate.admit(position: 8, id: "a-8", consumer: "c2", asking: servers.questions) == .pass)
        #expect(gate.admit(position: 9, id: "a-9", consumer: "c3", asking: servers.questions) == .pass)
    }

    @Test("every read passes only while the stream names a leader holding the last entry let through and the one read")
    func reads() {
        let servers = ScriptedServers()
        servers.script.withLock { $0.hosts = ["c1": "n1"] }
        let gate = LeaderGate()
        #expect(gate.admit(position: 1, id: "a-1", consumer: "c1", asking: servers.questions) == .pass)
        servers.script.withLock { $0.held = [1: .id("a-1"), 2: .id("a-2"), 3: .id("a-3")] }
        #expect(gate.admitRead(position: 2, id: "a-2", asking: servers.questions) == .pass)
        let asked = servers.script.withLock { $0.questions }
        #expect(gate.admitRead(position: 3, id: "a-3", asking: servers.questions) == .pass)
        #expect(servers.script.withLock { $0.questions } == asked + 3, "asked again at once")
        // Leadership moved to a copy numbered one further (an entry only it holds, before position 3).
        servers.script.withLock { $0.leader = "n2"; $0.held[4] = .id("a-3") }
        #expect(gate.admitRead(position: 4, id: "a-4", asking: servers.questions) == .followAgain(after: 3),
                "the leader holds another entry at the position read")
        servers.script.withLock { $0.leader = nil }
        #expect(gate.admitRead(position: 4, id: "a-4", asking: servers.questions) == .followAgain(after: 3))
        servers.script.withLock { $0.leader = "n2"; $0.held[3] = .id("b-9") }
        #expect(gate.admitRead(position: 4, id: "a-4", asking: servers.questions) == .leaderContradicts("n2", after: 3))
    }

    @Test("a distrusted leader's answers to reads pass nothing while it leads")
    func distrustedReads() {
        let servers = ScriptedServers()
        let gate = LeaderGate()
        gate.distrustLeader(at: 100)
        gate.distrusted("n1")
        servers.script.withLock { $0.held[1] = .id("a-1") }
        #expect(gate.admitRead(position: 1, id: "a-1", asking: servers.questions) == .followAgain(after: 0))
        servers.script.withLock { $0.leader = "n2" }
        #expect(gate.admitRead(position: 1, id: "a-1", asking: servers.questions) == .pass)
    }
}

@Suite("A replica that lags checks a leader against the replicas ahead of it")
struct PeerMarksGateTests {
    @Test("a leader not holding what a replica ahead applied passes nothing, however well it agrees at the last position")
    func laggingReplica() {
        let servers = ScriptedServers()
        // The replica applied up to 3; the leader's copy agrees there but lacks the entry at 5 that n-b applied.
        servers.script.withLock { $0.hosts = ["c1": "n2", "c2": "n2"]; $0.leader = "n2"; $0.held = [3: .id("a-3")] }
        let gate = LeaderGate()
        #expect(gate.admit(position: 3, id: "a-3", consumer: "c1", asking: servers.questions) == .pass)
        gate.restart(after: 3)
        gate.peerApplied(node: "b", position: 5, id: "a-5", at: 100)
        servers.script.withLock { $0.held[5] = .id("a-6") }
        #expect(gate.admit(position: 4, id: "a-4", consumer: "c2", asking: servers.questions)
            == .leaderContradictsPeer("n2", peer: "b", position: 5, after: 3))
        #expect(gate.admitRead(position: 4, id: "a-4", asking: servers.questions)
            == .leaderContradictsPeer("n2", peer: "b", position: 5, after: 3), "reads are held to it too")
        // A copy that ends before the peer's entry does not hold it either.
        servers.script.withLock { $0.held[5] = .beyondEnd }
        #expect(gate.admit(position: 4, id: "a-4", consumer: "c2", asking: servers.questions)
            == .leaderContradictsPeer("n2", peer: "b", position: 5, after: 3))
        // Another leader holding it lets the replica through, and is not asked about it again.
        servers.script.withLock { $0.leader = "n1"; $0.hosts["c3"] = "n1"; $0.held[5] = .id("a-5"); $0.held[4] = .id("a-4") }
        #expect(gate.admit(position: 4, id: "a-4", consumer: "c3", asking: servers.questions) == .pass)
        let asked = servers.script.withLock { $0.questions }
        #expect(gate.admitRead(position: 5, id: "a-5", asking: servers.questions) == .pass)
        #expect(servers.script.withLock { $0.questions } == asked + 3, "leader, last entry, entry read: not the mark")
    }

    @Test("marks at or behind the replica's own last entry, and a leader's that removed them, change nothing")
    func marksBehindOrRemoved() {
        let servers = ScriptedServers()
        servers.script.withLock { $0.hosts = ["c1": "n1", "c2": "n1"]; $0.held = [7: .id("a-7"), 9: .removed] }
        let gate = LeaderGate()
        #expect(gate.admit(position: 7, id: "a-7", consumer: "c1", asking: servers.questions) == .pass)
        gate.peerApplied(node: "b", position: 6, id: "other", at: 100)
        gate.peerApplied(node: "c", position: 9, id: "a-9", at: 100)
        gate.restart(after: 7)
        #expect(gate.admit(position: 8, id: "a-8", consumer: "c2", asking: servers.questions) == .pass)
    }

    @Test("a peer whose entry two different leaders do not hold went wrong itself: it is ignored for a while")
    func wrongPeer() {
        let servers = ScriptedServers()
        servers.script.withLock { $0.hosts = ["c1": "n1", "c2": "n2", "c3": "n3"]; $0.held = [2: .id("a-2"), 3: .id("a-3"), 4: .id("a-4")] }
        let gate = LeaderGate()
        #expect(gate.admit(position: 2, id: "a-2", consumer: "c1", asking: servers.questions) == .pass)
        gate.restart(after: 2)
        gate.peerApplied(node: "b", position: 4, id: "forged-4", at: 100)
        #expect(gate.admit(position: 3, id: "a-3", consumer: "c1", asking: servers.questions)
            == .leaderContradictsPeer("n1", peer: "b", position: 4, after: 2))
        servers.script.withLock { $0.leader = "n2" }
        #expect(gate.admit(position: 3, id: "a-3", consumer: "c2", asking: servers.questions) == .pass,
                "a second leader not holding it either: the peer is the one that went wrong")
        servers.script.withLock { $0.leader = "n3"; $0.now += PeerMarks.ignoreSeconds - 1 }
        #expect(gate.admit(position: 3, id: "a-3", consumer: "c3", asking: servers.questions) == .pass)
        // After a while it is heeded again.
        servers.script.withLock { $0.leader = "n1"; $0.now += 2 }
        gate.restart(after: 2)
        #expect(gate.admit(position: 3, id: "a-3", consumer: "c1", asking: servers.questions)
            == .leaderContradictsPeer("n1", peer: "b", position: 4, after: 2))
    }
}

extension PeerMarksGateTests {
    @Test("a mark announced while a consumer is trusted has it checked again at once")
    func markWhileTrusted() {
        let servers = ScriptedServers()
        servers.script.withLock { $0.hosts = ["c1": "n1"]; $0.held = [1: .id("a-1"), 2: .id("a-2"), 6: .id("b-6")] }
        let gate = LeaderGate()
        #expect(gate.admit(position: 1, id: "a-1", consumer: "c1", asking: servers.questions) == .pass)
        gate.peerApplied(node: "b", position: 6, id: "a-6", at: 100)
        #expect(gate.admit(position: 2, id: "a-2", consumer: "c1", asking: servers.questions)
            == .leaderContradictsPeer("n1", peer: "b", position: 6, after: 1))
        gate.peerApplied(node: "b", position: 6, id: "b-6", at: 100)
        #expect(gate.admit(position: 2, id: "a-2", consumer: "c1", asking: servers.questions) == .pass)
        let asked = servers.script.withLock { $0.questions }
        #expect(gate.admit(position: 3, id: "a-3", consumer: "c1", asking: servers.questions) == .pass)
        #expect(servers.script.withLock { $0.questions } == asked, "a mark found held is not asked about again")
    }
}
