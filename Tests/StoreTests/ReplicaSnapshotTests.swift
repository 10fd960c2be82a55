import DataModel
import Dispatch
@testable import Store
import Testing

@Suite("Cluster snapshots: encoding, starting from one, and a replica the log left behind")
struct ReplicaSnapshotTests {
    static func sample() throws -> ReplicaSnapshot {
        var presence = ClusterPresence()
        presence.lastHeard = ["a": 1_700_000_000_000, "b": 1_700_000_000_500]
        presence.armed = [
            "a": ["s1": try Fixture.update("/", [("presence/s1", #""offline""#)]),
                  "s2": try Fixture.set("/x", #"{"y":{".sv":"timestamp"}}"#)],
        ]
        let held = Proposal(node: "b", number: 7, clock: 1_700_000_000_600,
                            operations: [.write(try Fixture.set("/held", "1"), caller: .user(auth: .string("u")),
                                                rulesVersion: 0)])
        return ReplicaSnapshot(
            position: 4242, root: try Fixture.node(#"{"a":{"b":[1,2,3],"c":"text"},"n":1.5,"t":true}"#),
            sequence: 9001, timestamp: 1_700_000_000_700,
            rules: RulesRevision(version: 3, source: Array(#"{"rules":{".read":true}}"#.utf8)),
            presence: presence, nodeOrder: NodeOrder(next: ["a": 12, "b": 5, "gone": .max], held: [held]),
            undecodable: 2)
    }

    @Test("a snapshot decodes to what was encoded, and encodes again to the same bytes")
    func roundTrip() throws {
        let snapshot = try Self.sample()
        let bytes = ReplicaSnapshotCodec.encode(snapshot)
        let decoded = try ReplicaSnapshotCodec.decode(bytes)
        #expect(decoded.position == 4242 && decoded.sequence == 9001 && decoded.timestamp == snapshot.timestamp)
        #expect(decoded.root == snapshot.root)
        #expect(decoded.rules == snapshot.rules)
        #expect(decoded.presence == snapshot.presence)
        #expect(decoded.nodeOrder == snapshot.nodeOrder)
        #expect(decoded.undecodable == 2)
        #expect(ReplicaSnapshotCodec.encode(decoded) == bytes)
    }

    @Test("a damaged or truncated snapshot is refused, never trusted")
    func damage() throws {
        let bytes = ReplicaSnapshotCodec.encode(try Self.sample())
        for index in stride(from: 0, to: bytes.count, by: 3) {
            var damaged = bytes
            damaged[index] ^= 0x41
            #expect(throws: BinaryDecodingError.self) { try ReplicaSnapshotCodec.decode(damaged) }
        }
        for length in [0, 4, 8, 12, bytes.count / 2, bytes.count - 1] {
            #expect(throws: BinaryDecodingError.self) { try ReplicaSnapshotCodec.decode(Array(bytes.prefix(length))) }
        }
    }

    @Test("the log keeps entries only back to its older snapshot; a node that joins later starts from the newest and ends identical")
    func joinFromSnapshot() async throws {
        let log = MemoryLog(snapshotInterval: 10)
        let nodes = try StoreReplicationTests.replicas(2, on: log)
        let armed = try Fixture.update("/", [("presence/alice", #""offline""#)])
        let done: Bool = await withCheckedContinuation { continuation in
            nodes[0].store.armDisconnect(session: "alice", write: armed) { continuation.resume(returning: $0) }
        }
        #expect(done)
        for step in 0..<60 {
            let write = step % 2 == 0 ? try Fixture.set("/counter", #"{".sv":{"increment":1}}"#)
                : try Fixture.set("/items/k\(step % 9)", "\(step)")
            _ = await nodes[step % 2].store.apply(write)
        }
        let head = UInt64(log.count)
        for node in nodes { #expect(await StoreReplicationTests.waitForSequence(node.store, 60)) }
        #expect(await Self.waitUntil { log.snapshotPositions.count == 2 })
        #expect(log.firstPosition > 1, "nothing was removed from the log")
        #expect(UInt64(log.firstPosition) == (log.snapshotPositions.first ?? 0) + 1)

        let late = try Store(configuration: StoreConfiguration(replication: log.node("late")))
        #expect(late.loadReport.loadedSnapshot && late.loadReport.snapshotPosition >= 10)
        #expect(UInt64(late.loadReport.replayedRecords) < head)
        #expect(await late.tree == (await nodes[0].store.tree))
        // The armed onDisconnect write came with the snapshot: it runs on the late node too.
        let fired: Result<WriteOutcome, StoreError>? = await withCheckedContinuation { continuation in
            nodes[0].store.fireDisconnect(session: "alice") { continuation.resume(returning: $0) }
        }
        #expect((try? fired?.get()) != nil)
        let presence = try Fixture.path("/presence/alice")
        #expect(await Self.waitUntilAsync { await late.value(at: presence) == (try? Fixture.node(#""offline""#)) })
        #expect(await late.tree == (await nodes[1].store.tree))
    }

    @Test("a serving replica whose next entries were removed restores the snapshot; its listeners see the change")
    func leftBehind() async throws {
        let log = MemoryLog(snapshotInterval: 5)
        let nodes = try StoreReplicationTests.replicas(2, on: log)
        _ = await nodes[0].store.apply(try Fixture.set("/before", "1"))
        #expect(await StoreReplicationTests.waitForSequence(nodes[1].store, 1))
        log.pause("n1")
        for step in 0..<40 { _ = await nodes[0].store.apply(try Fixture.set("/k\(step % 4)", "\(step)")) }
        #expect(await Self.waitUntil { log.firstPosition > 3 })
        log.resume("n1")
        #expect(await StoreReplicationTests.waitForSequence(nodes[1].store, 41))
        #expect(await nodes[1].store.tree == (await nodes[0].store.tree))
        #expect(nodes[1].records.value.contains { $0.hasSuffix(#"["/"]"#) }, "no change of the whole tree was reported")
        // And it follows the log again afterwards.
        _ = await nodes[0].store.apply(try Fixture.set("/after", "2"))
        #expect(await StoreReplicationTests.waitForSequence(nodes[1].store, 42))
        #expect(await nodes[1].store.value(at: try Fixture.path("/after")) == (try Fixture.node("2")))
    }

    @Test("a gap that no snapshot covers (a stray delivery, nothing removed) ends in following again, not in waiting for ever")
    func strayGap() async throws {
        let log = MemoryLog()
        let nodes = try StoreReplicationTests.replicas(2, on: log)
        for step in 1...2 { await nodes[0].store.applyOrFail(try Fixture.set("/a", "\(step)")) }
        #expect(await StoreReplicationTests.waitForSequence(nodes[1].store, 2))
        log.pause("n1")
        for step in 3...5 { await nodes[0].store.applyOrFail(try Fixture.set("/a", "\(step)")) }
        log.deliverOutOfTurn(5, to: "n1")
        var caughtUp = false
        for _ in 0..<500 where !caughtUp {  // the snapshot is asked for again after 1 s, then n1 follows again
            caughtUp = await nodes[1].store.value(at: try Fixture.path("/a")) == (try Fixture.node("5"))
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(caughtUp, "n1 never followed again after a gap no snapshot covers")
        #expect(await nodes[1].store.tree == (await nodes[0].store.tree))
    }

    static func waitUntil(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<400 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }

    static func waitUntilAsync(_ condition: () async -> Bool) async -> Bool {
        for _ in 0..<400 {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return await condition()
    }
}
