import DataModel
@testable import Store
import Testing

/// Issue 28: a replica fed an entry the log does not hold at that position (a deposed NATS leader's copy of the
/// stream did this) diverges for good, since it then skips the log's entry there as already applied. It must
/// rebuild from the log: when the log tells it, or when the other replicas outvote its checkpoint.
@Suite("A diverged replica rebuilds from the log")
struct ReplicaRebuildTests {
    /// A proposal no node made, setting `path` to `json`.
    static func forged(_ path: String, _ json: String) throws -> [UInt8] {
        ProposalCodec.encode(Proposal(node: "ghost", number: 1, clock: 0,
                                      operations: [.write(try Fixture.set(path, json), caller: .privileged, rulesVersion: 0)]))
    }

    /// Polls `condition` (bounded) until it holds.
    static func eventually(_ condition: () async -> Bool) async -> Bool {
        for _ in 0..<5_000 {
            if await condition() { return true }
            await Task.yield()
        }
        return false
    }

    /// Three replicas, three writes, then an entry forged to n2 alone at position 4 and two more writes: n2 applied
    /// the forgery at 4 and skipped the log's entry there.
    static func divergedCluster(checkpointInterval: UInt64, divergences: Locked<[String]>? = nil) async throws
        -> (log: MemoryLog, nodes: [(store: Store, records: Locked<[String]>)])
    {
        let log = MemoryLog()
        let nodes = try StoreReplicationTests.replicas(3, on: log, checkpointInterval: checkpointInterval,
                                                       divergences: divergences)
        for step in 1...3 { await nodes[0].store.applyOrFail(try Fixture.set("/a", "\(step)")) }
        for node in nodes { #expect(await StoreReplicationTests.waitForSequence(node.store, 3)) }
        log.forge(try forged("/a", #""forged""#), to: "n2")
        let (a, forgedValue) = (try Fixture.path("/a"), try Fixture.node(#""forged""#))
        #expect(await eventually { await nodes[2].store.value(at: a) == forgedValue })
        await nodes[0].store.applyOrFail(try Fixture.set("/b", "4"))
        await nodes[1].store.applyOrFail(try Fixture.set("/c", "5"))
        return (log, nodes)
    }

    @Test("told by its log, a replica drops the entry the log does not hold and ends with the others' tree")
    func rebuildsWhenTold() async throws {
        let (log, nodes) = try await Self.divergedCluster(checkpointInterval: 1_000)
        let c = try Fixture.path("/c")
        #expect(await Self.eventually { await nodes[2].store.value(at: c) == (try? Fixture.node("5")) })
        let expected = await nodes[0].store.tree
        #expect(await nodes[1].store.tree == expected)
        #expect(await nodes[2].store.tree != expected, "the forged entry did not make n2 diverge")

        let recordsBefore = nodes[2].records.value.count
        log.reportDivergence(to: "n2")
        #expect(await Self.eventually { await nodes[2].store.tree == expected })
        // One change of the whole tree tells n2's listeners, not a replay from an empty tree.
        let rebuildRecords = Array(nodes[2].records.value.dropFirst(recordsBefore))
        #expect(rebuildRecords.count == 1 && rebuildRecords.first?.hasSuffix(#"["/"]"#) == true,
                "records after the rebuild: \(rebuildRecords)")
        // It serves and proposes again.
        await nodes[2].store.applyOrFail(try Fixture.set("/d", "6"))
        for node in nodes { #expect(await StoreReplicationTests.waitForSequence(node.store, 6)) }
        let after = await nodes[0].store.tree
        for node in nodes { #expect(await node.store.tree == after) }
    }

    @Test("a replica whose checkpoint two others outvote rebuilds by itself; the two agreeing do not")
    func rebuildsWhenOutvoted() async throws {
        let divergences = Locked<[String]>([])
        let (_, nodes) = try await Self.divergedCluster(checkpointInterval: 5, divergences: divergences)
        let expected = await nodes[0].store.tree
        #expect(await Self.eventually { await nodes[2].store.tree == expected },
                "n2 kept the forged tree; divergences: \(divergences.value)")
        #expect(divergences.value.contains { $0.hasPrefix("n2≠") }, "reported: \(divergences.value)")
        #expect(await nodes[1].store.tree == expected)
    }

    @Test("a replica that starts late on a copy of the log that went wrong is outvoted by the checkpoints recorded in the log, distrusts that copy and rebuilds from another")
    func lateReplicaOnAWrongCopy() async throws {
        let log = MemoryLog()
        let divergences = Locked<[String]>([])
        let live = try StoreReplicationTests.replicas(2, on: log, checkpointInterval: 4, divergences: divergences)
        for step in 1...9 { await live[0].store.applyOrFail(try Fixture.set("/a", "\(step)")) }
        for node in live { #expect(await StoreReplicationTests.waitForSequence(node.store, 9)) }
        // Both serving replicas recorded their checkpoints at positions 4 and 8 in the log.
        #expect(await Self.eventually { log.count >= 13 }, "the log holds \(log.count) entries")
        log.serveWrongCopy(to: "n2", at: 2, try Self.forged("/z", #""wrong copy""#))

        let late = try StoreReplicationTests.replicas(1, on: log, checkpointInterval: 4, divergences: divergences,
                                                      from: 2)[0]
        let expected = await live[0].store.tree
        #expect(await Self.eventually { await late.store.tree == expected },
                "n2 kept the wrong copy's tree; divergences: \(divergences.value)")
        #expect(log.distrusted == ["n2"], "distrusted by: \(log.distrusted)")
        // The serving replicas hear the late one's hashes too, and report them, but do not rebuild.
        #expect(divergences.value.allSatisfy { $0.hasPrefix("n2≠") || $0.contains("≠n2@") },
                "reported: \(divergences.value)")
        #expect(await live[1].store.tree == expected)
        // It serves and proposes like the others.
        await late.store.applyOrFail(try Fixture.set("/b", "10"))
        for node in live + [late] { #expect(await StoreReplicationTests.waitForSequence(node.store, 10)) }
    }

    @Test("a checkpoint book counts who agrees at a position: one against two is outvoted, one against one is not")
    func outvoting() {
        var book = CheckpointBook()
        _ = book.recordMine(Checkpoint(node: "me", position: 10, hash: "x"))
        _ = book.recordTheirs(Checkpoint(node: "b", position: 10, hash: "y"))
        #expect(!book.isOutvoted(at: 10))
        _ = book.recordTheirs(Checkpoint(node: "c", position: 10, hash: "y"))
        #expect(book.isOutvoted(at: 10))
        _ = book.recordTheirs(Checkpoint(node: "d", position: 10, hash: "x"))
        #expect(!book.isOutvoted(at: 10))
        #expect(!book.isOutvoted(at: 20))
    }
}
