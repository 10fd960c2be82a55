import DataModel
import Dispatch
import Synchronization
@testable import Store
import Testing

/// A replicated log in memory: one order for every node's appends, each follower fed in order on its own queue.
/// What JetStream provides in cluster mode, without the network, to test the stores' side of the contract.
final class MemoryLog: @unchecked Sendable {
    // Everything below is guarded by `mutex`.
    private let mutex = Mutex(())
    /// The entries, `nil` once removed below a snapshot.
    private var entries: [[UInt8]?] = []
    private var ids: Set<String> = []
    private var followers: [String: (queue: DispatchQueue, deliver: @Sendable (UInt64, [UInt8]) -> Void)] = [:]
    /// Followers that get nothing for now, and the position each had reached (``pause(_:)``).
    private var paused: [String: UInt64] = [:]
    private var checkpointListeners: [@Sendable (Checkpoint) -> Void] = []
    /// Questions for the head still to be answered with a failure (``failHeadQuestions(_:)``), and how many were
    /// asked.
    private var headQuestionsToFail = 0
    private var headQuestionsAsked = 0
    /// Each node's divergence handler (``ReplicatedLog/watchDivergence(_:)``).
    private var divergenceHandlers: [String: @Sendable () -> Void] = [:]
    /// Entries a node's followings are served in place of the log's, by position, until it distrusts its source
    /// (``serveWrongCopy(to:at:_:)``); the nodes that did, in order.
    private var wrongCopies: [String: [UInt64: [UInt8]]] = [:]
    private var distrusting: [String] = []
    /// The two newest snapshots, oldest first.
    private var snapshots: [StoredSnapshot] = []
    /// Each node's reachability handler (``ReplicatedLog/watchReachability(_:)``), and the nodes cut off now.
    private var reachabilityHandlers: [String: @Sendable (Bool) -> Void] = [:]
    private var cut: Set<String> = []
    /// What every replica is told about snapshots (0: none).
    let snapshotInterval: UInt64

    init(snapshotInterval: UInt64 = 0) {
        self.snapshotInterval = snapshotInterval
    }

    /// Tells every replica's listener about `checkpoint` (as the core NATS subject does).
    func announce(_ checkpoint: Checkpoint) {
        let listeners = mutex.withLock { _ in checkpointListeners }
        for listener in listeners { DispatchQueue.global().async { listener(checkpoint) } }
    }

    fileprivate func listen(_ received: @escaping @Sendable (Checkpoint) -> Void) {
        mutex.withLock { _ in checkpointListeners.append(received) }
    }

    /// The view of the log one node gets.
    func node(_ name: String) -> Replica { Replica(log: self, node: name) }

    /// The next `count` questions for the log's head fail, as while its servers cannot be reached.
    func failHeadQuestions(_ count: Int) {
        mutex.withLock { _ in headQuestionsToFail = count }
    }

    /// Questions for the head asked so far.
    var headQuestions: Int { mutex.withLock { _ in headQuestionsAsked } }

    /// The head, or `nil` for a question that fails (``failHeadQuestions(_:)``).
    fileprivate func answerHeadQuestion() -> UInt64? {
        mutex.withLock { _ in
            headQuestionsAsked += 1
            guard headQuestionsToFail == 0 else {
                headQuestionsToFail -= 1
                return nil
            }
            return UInt64(entries.count)
        }
    }

    var count: Int { mutex.withLock { _ in entries.count } }

    /// The position of the oldest entry still held (`count + 1` when none is).
    var firstPosition: Int { mutex.withLock { _ in (entries.firstIndex { $0 != nil } ?? entries.count) + 1 } }

    /// The positions of the snapshots held.
    var snapshotPositions: [UInt64] { mutex.withLock { _ in snapshots.map(\.position) } }

    fileprivate func append(_ payload: [UInt8], id: String) {
        mutex.withLock { _ in
            guard ids.insert(id).inserted else { return }
            entries.append(payload)
            let position = UInt64(entries.count)
            for (node, follower) in followers where paused[node] == nil {
                let deliver = follower.deliver
                follower.queue.async { deliver(position, payload) }
            }
        }
    }

    fileprivate func follow(_ node: String, after: UInt64, deliver: @escaping @Sendable (UInt64, [UInt8]) -> Void) {
        mutex.withLock { _ in
            let queue = DispatchQueue(label: "memory-log.follower")
            let wrong = wrongCopies[node] ?? [:]
            for (index, payload) in entries.enumerated() where UInt64(index) >= after {
                guard let payload = wrong[UInt64(index + 1)] ?? payload else { continue }
                queue.async { deliver(UInt64(index + 1), payload) }
            }
            followers[node] = (queue, deliver)
        }
    }

    /// Delivers `payload` to `node`'s replica alone at the next position, which the log then fills with whatever is
    /// appended next: what a deposed NATS leader's copy of the stream did (docs/reliability.md).
    func forge(_ payload: [UInt8], to node: String) {
        mutex.withLock { _ in
            guard let follower = followers[node] else { return }
            let position = UInt64(entries.count + 1)
            let deliver = follower.deliver
            follower.queue.async { deliver(position, payload) }
        }
    }

    /// Delivers the entry at `position` to `node`'s replica now, out of its turn: what a delivery of an earlier
    /// following that strays into a new one looks like to the replica (a gap, with nothing removed).
    func deliverOutOfTurn(_ position: UInt64, to node: String) {
        mutex.withLock { _ in
            guard let follower = followers[node], position >= 1, position <= UInt64(entries.count),
                let payload = entries[Int(position - 1)]
            else { return }
            let deliver = follower.deliver
            follower.queue.async { deliver(position, payload) }
        }
    }

    /// From now on, `node`'s followings are served `payload` at `position` in place of the log's entry there, as a
    /// NATS server whose copy went wrong serves every consumer it holds, until the node distrusts its source.
    func serveWrongCopy(to node: String, at position: UInt64, _ payload: [UInt8]) {
        mutex.withLock { _ in wrongCopies[node, default: [:]][position] = payload }
    }

    /// The nodes that distrusted the copy they were served (``ReplicatedLog/distrustSource()``), in order.
    var distrusted: [String] { mutex.withLock { _ in distrusting } }

    fileprivate func distrust(_ node: String) {
        mutex.withLock { _ in
            distrusting.append(node)
            wrongCopies[node] = nil
        }
    }

    /// Tells `node`'s replica its entries differ from the log's (as JetStreamLog's gate does).
    func reportDivergence(to node: String) {
        let handler = mutex.withLock { _ in divergenceHandlers[node] }
        handler?()
    }

    fileprivate func watchDivergence(_ node: String, _ diverged: @escaping @Sendable () -> Void) {
        mutex.withLock { _ in divergenceHandlers[node] = diverged }
    }

    /// Cuts `node` off, as a partition would: nothing is delivered to it, its questions for the head fail, and it is
    /// told the log is unreachable.
    func cutOff(_ node: String) {
        pause(node)
        let handler = mutex.withLock { _ in
            cut.insert(node)
            return reachabilityHandlers[node]
        }
        handler?(false)
    }

    /// Ends ``cutOff(_:)``: the node reaches the log again, and gets what it missed.
    func heal(_ node: String) {
        let handler = mutex.withLock { _ in
            cut.remove(node)
            return reachabilityHandlers[node]
        }
        resume(node)
        handler?(true)
    }

    fileprivate func isCut(_ node: String) -> Bool { mutex.withLock { _ in cut.contains(node) } }

    fileprivate func watchReachability(_ node: String, _ changed: @escaping @Sendable (Bool) -> Void) {
        mutex.withLock { _ in reachabilityHandlers[node] = changed }
    }

    /// Stops delivering to `node`'s replica, as if it lagged far behind.
    func pause(_ node: String) {
        mutex.withLock { _ in paused[node] = UInt64(entries.count) }
    }

    /// Delivers again to `node`'s replica, from where it was paused: only what the log still holds.
    func resume(_ node: String) {
        mutex.withLock { _ in
            guard let from = paused.removeValue(forKey: node), let follower = followers[node] else { return }
            for (index, payload) in entries.enumerated() where UInt64(index) >= from {
                guard let payload else { continue }
                let deliver = follower.deliver
                follower.queue.async { deliver(UInt64(index + 1), payload) }
            }
        }
    }

    fileprivate func store(_ snapshot: StoredSnapshot) -> Bool {
        mutex.withLock { _ in
            if let newest = snapshots.last, newest.position >= snapshot.position { return false }
            snapshots.append(snapshot)
            if snapshots.count > 2 { snapshots.removeFirst() }
            if snapshots.count == 2 {
                for index in 0..<Int(snapshots[0].position) { entries[index] = nil }
            }
            return true
        }
    }

    fileprivate var latest: StoredSnapshot? { mutex.withLock { _ in snapshots.last } }

    final class Replica: ReplicatedLog, @unchecked Sendable {
        let log: MemoryLog
        let node: String
        var maxPayloadBytes: Int { 64 * 1024 }
        var snapshotInterval: UInt64 { log.snapshotInterval }

        init(log: MemoryLog, node: String) {
            self.log = log
            self.node = node
        }

        func open(completion: @escaping @Sendable (Result<Void, ReplicationError>) -> Void) {
            completion(.success(()))
        }

        func lastPosition(completion: @escaping @Sendable (Result<UInt64, ReplicationError>) -> Void) {
            guard !log.isCut(node), let head = log.answerHeadQuestion() else {
                return completion(.failure(ReplicationError("unreachable")))
            }
            completion(.success(head))
        }

        func follow(after: UInt64, deliver: @escaping @Sendable (UInt64, [UInt8]) -> Void) {
            log.follow(node, after: after, deliver: deliver)
        }

        func append(_ payload: [UInt8], id: String, failed: @escaping @Sendable (ReplicationError) -> Void) {
            log.append(payload, id: id)
        }

        func storeSnapshot(_ snapshot: [UInt8], position: UInt64,
                           completion: @escaping @Sendable (Result<Bool, ReplicationError>) -> Void)
        {
            completion(.success(log.store(StoredSnapshot(position: position, bytes: snapshot))))
        }

        func latestSnapshot(completion: @escaping @Sendable (Result<StoredSnapshot?, ReplicationError>) -> Void) {
            completion(.success(log.latest))
        }

        func announce(_ checkpoint: Checkpoint) { log.announce(checkpoint) }

        func listenForCheckpoints(_ received: @escaping @Sendable (Checkpoint) -> Void) { log.listen(received) }

        func watchDivergence(_ diverged: @escaping @Sendable () -> Void) { log.watchDivergence(node, diverged) }

        func distrustSource() { log.distrust(node) }

        func watchReachability(_ changed: @escaping @Sendable (Bool) -> Void) { log.watchReachability(node, changed) }

        func close() {}
    }
}

@Suite("Clustered stores on one replicated log")
struct StoreReplicationTests {
    /// `count` stores on one log, each recording the change records it reports.
    static func replicas(_ count: Int, on log: MemoryLog, checkpointInterval: UInt64 = 1_000,
                         divergences: Locked<[String]>? = nil, from first: Int = 0) throws
        -> [(store: Store, records: Locked<[String]>)]
    {
        try (first..<first + count).map { index in
            let records = Locked<[String]>([])
            // Clocks a few seconds apart, as on real machines: the log's time never goes back anyway.
            let skew = Double(index * 1000)
            var configuration = StoreConfiguration(clock: { StoreConfiguration.systemClock() - skew },
                                                   replication: log.node("n\(index)"))
            configuration.checkpointInterval = checkpointInterval
            configuration.divergence = { mine, theirs in
                divergences?.withLock { $0.append("\(mine.node)≠\(theirs.node)@\(theirs.position)") }
            }
            let store = try Store(
                configuration: configuration,
                observer: { record in
                    records.withLock { $0.append("\(record.sequence) \(record.changes.map { "\($0.path)" })") }
                })
            return (store, records)
        }
    }

    /// When `store`'s copy last heard from `node` while it has armed writes (`nil` once it has none), and whether it
    /// has any, as the store's sequencer sees it after everything submitted before.
    static func presence(of node: String, in store: Store) async -> (lastHeard: UInt64?, isArmed: Bool) {
        await withCheckedContinuation { continuation in
            store.inOrder { _ in
                let presence = store.sequencer.state.presence
                let isArmed = presence.armed[node] != nil
                continuation.resume(returning: (isArmed ? presence.lastHeard[node] : nil, isArmed))
            }
        }
    }

    /// Waits until `store` applied `sequence` entries (bounded).
    static func waitForSequence(_ store: Store, _ sequence: UInt64) async -> Bool {
        for _ in 0..<2_000 {
            let applied: UInt64 = await withCheckedContinuation { continuation in
                store.inOrder { continuation.resume(returning: $0.sequence) }
            }
            if applied >= sequence { return true }
            await Task.yield()
        }
        return false
    }

    @Test("a starting replica catches up to the head the log tells: while it cannot tell, the store does not load")
    func startCatchesUpToTheToldHead() async throws {
        let log = MemoryLog()
        let writer = try Self.replicas(1, on: log)[0]
        for value in 0..<30 { _ = await writer.store.apply(try Fixture.set("/k", "\(value)")) }
        log.failHeadQuestions(3)
        let asked = log.headQuestions
        let late = try Store(configuration: StoreConfiguration(clock: StoreConfiguration.systemClock,
                                                               replication: log.node("late")))
        #expect(late.waitUntilLoaded() == nil)
        // Three failed questions and the one answered: the opening server's word was not taken.
        #expect(log.headQuestions - asked >= 4)
        #expect(late.loadReport.replayedRecords >= 30)
        #expect(await late.tree.descendant(at: try Fixture.path("/k")) == (try Fixture.node("29")))
    }

    @Test("writes from every node take one order: the same tree and the same change records everywhere")
    func oneOrder() async throws {
        let log = MemoryLog()
        let nodes = try Self.replicas(3, on: log)
        let perNode = 150
        await withTaskGroup(of: Void.self) { group in
            for (index, node) in nodes.enumerated() {
                group.addTask {
                    for step in 0..<perNode {
                        let writes = [
                            try? Fixture.set("/counter", #"{".sv":{"increment":1}}"#),
                            try? Fixture.set("/last", "\"n\(index)-\(step)\""),
                            try? Fixture.set("/at", #"{".sv":"timestamp"}"#),
                        ].compactMap { $0 }
                        _ = await node.store.apply(writes[step % writes.count])
                    }
                }
            }
        }
        for node in nodes { #expect(await Self.waitForSequence(node.store, UInt64(3 * perNode))) }
        let trees = await nodes.asyncMap { await $0.store.tree }
        #expect(trees.allSatisfy { $0 == trees[0] })
        #expect(trees[0].descendant(at: try Fixture.path("/counter")) == (try Fixture.node("150")))
        let records = nodes.map { $0.records.value }
        #expect(records.allSatisfy { $0 == records[0] } && records[0].count == 3 * perNode)
    }

    @Test("compare-and-set transactions racing from different nodes end at the exact total")
    func transactions() async throws {
        let log = MemoryLog()
        let nodes = try Self.replicas(3, on: log)
        let path = try Fixture.path("/total")
        let perNode = 40
        await withTaskGroup(of: Void.self) { group in
            for node in nodes {
                group.addTask {
                    var done = 0
                    while done < perNode {
                        let current = await node.store.value(at: path)
                        let next = (current.leafValue.flatMap { if case .number(let n) = $0 { n } else { nil } } ?? 0) + 1
                        guard let value = try? Fixture.value("\(Int(next))") else { return }
                        let write = StoreWrite.set(.node(path), value, expectedHash: Store.hash(of: current))
                        if case .success = await node.store.apply(write) { done += 1 }
                    }
                }
            }
        }
        for node in nodes {
            #expect(await Self.waitForSequence(node.store, UInt64(log.count)))
            #expect(await node.store.value(at: path) == (try Fixture.node("\(3 * perNode)")))
        }
    }

    @Test("a turn's writes travel as one message; a write too large for one message is refused, nothing applied")
    func packing() async throws {
        let log = MemoryLog()
        let nodes = try Self.replicas(2, on: log)
        let writes = try (0..<50).map { try Fixture.set("/batch/k\($0)", "\($0)") }
        let results = Locked<[Int]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            nodes[0].store.write(batch: writes, by: .privileged) { index, result in
                if case .success = result { results.withLock { $0.append(index) } }
                if index == writes.count - 1 { continuation.resume() }
            }
        }
        #expect(results.value == Array(0..<50))
        #expect(log.count == 1, "50 writes of one task took \(log.count) messages")
        let huge = try Fixture.set("/huge", "\"" + String(repeating: "x", count: 100_000) + "\"")
        let refused = await nodes[0].store.apply(huge)
        guard case .failure(.tooLarge) = refused else {
            Issue.record("a write larger than a log message was not refused: \(refused)")
            return
        }
        #expect(log.count == 1)
        #expect(await Self.waitForSequence(nodes[1].store, 50))
        #expect(await nodes[1].store.value(at: try Fixture.path("/batch/k49")) == (try Fixture.node("49")))
    }

    @Test("replicas compare their trees' hashes every few positions: agreement is silent, a differing hash is reported")
    func divergenceCheck() async throws {
        let log = MemoryLog()
        let divergences = Locked<[String]>([])
        let nodes = try Self.replicas(2, on: log, checkpointInterval: 10, divergences: divergences)
        for step in 0..<30 { _ = await nodes[step % 2].store.apply(try Fixture.set("/k\(step % 7)", "\(step)")) }
        for node in nodes { #expect(await Self.waitForSequence(node.store, 30)) }
        // A replica whose tree differs announces another hash for a position both others have checked.
        log.announce(Checkpoint(node: "stray", position: 20, hash: "not-the-hash"))
        var reported: [String] = []
        // Polled for up to 10 s: the announcement crosses two queues, which a loaded machine may take a while to run.
        for _ in 0..<2_000 where reported.count < 2 {
            reported = divergences.value
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
        #expect(reported.sorted() == ["n0≠stray@20", "n1≠stray@20"], "reported: \(reported)")
    }

    @Test("a node's proposals stored out of order (a retry across a leader election) apply in the node's order, once")
    func perNodeOrder() async throws {
        let log = MemoryLog()
        let nodes = try Self.replicas(2, on: log)
        let writer = log.node("x")
        func append(_ number: UInt64, _ value: String) throws {
            let proposal = Proposal(node: "x", number: number, clock: StoreConfiguration.systemClock(),
                                    operations: [.write(try Fixture.set("/v", value), caller: .privileged, rulesVersion: 0)])
            // A different id each time, as if the log's de-duplication had missed the retry.
            writer.append(ProposalCodec.encode(proposal), id: "\(proposal.id)-\(log.count)") { _ in }
        }
        try append(2, "2")
        try append(3, "3")
        try append(1, "1")
        try append(2, "99")  // a duplicate of proposal 2: ignored
        for node in nodes {
            #expect(await Self.waitForSequence(node.store, 3))
            #expect(await node.store.value(at: try Fixture.path("/v")) == (try Fixture.node("3")))
            #expect(node.records.value.count == 3)
        }
    }

    @Test("pipelined writes and reads of one caller: each read sees exactly the writes submitted before it")
    func pipelinedReads() async throws {
        let log = MemoryLog()
        let nodes = try Self.replicas(2, on: log)
        let store = nodes[0].store
        let path = try Fixture.path("/p")
        let seen = Locked<[Node]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // All submitted in one go, as a connection's read pass does.
            for step in 0..<10 {
                store.write(batch: [try! Fixture.set("/p", "\(step)")], by: .privileged) { _, _ in }
                store.read(path) { node in
                    let count = seen.withLock { $0.append(node); return $0.count }
                    if count == 10 { continuation.resume() }
                }
            }
        }
        #expect(seen.value == (try (0..<10).map { try Fixture.node("\($0)") }))
    }

    @Test("while the log cannot tell its head, a read waits and the question is asked again; it is answered after")
    func readWaitsForTheHead() async throws {
        let log = MemoryLog()
        let nodes = try Self.replicas(2, on: log)
        let written: Void = await withCheckedContinuation { continuation in
            nodes[0].store.write(try! Fixture.set("/x", "1"), by: .privileged) { _ in continuation.resume() }
        }
        _ = written
        log.failHeadQuestions(3)
        let before = log.headQuestions
        let seen: Node = await withCheckedContinuation { continuation in
            nodes[1].store.awaitLogHead(resumingOn: { $0() }) {
                nodes[1].store.read(try! Fixture.path("/x")) { continuation.resume(returning: $0) }
            }
        }
        // Three failed questions and the one answered: the read was not answered from the replica meanwhile.
        #expect(log.headQuestions - before >= 4)
        #expect(seen == (try Fixture.node("1")))
    }

    @Test("a read submitted after a write on the same node sees it, before the write's completion")
    func readsFollowOwnWrites() async throws {
        let log = MemoryLog()
        let nodes = try Self.replicas(2, on: log)
        let path = try Fixture.path("/mine")
        for step in 0..<50 {
            let seen: Node = await withCheckedContinuation { continuation in
                nodes[0].store.write(try! Fixture.set("/mine", "\(step)"), by: .privileged) { _ in }
                nodes[0].store.read(path) { continuation.resume(returning: $0) }
            }
            #expect(seen == (try Fixture.node("\(step)")))
        }
    }
}

@Suite("onDisconnect writes across a cluster")
struct ClusterDisconnectTests {
    @Test("an armed write runs once, everywhere, when its connection ends; firing again does nothing")
    func firesOnClose() async throws {
        let log = MemoryLog()
        let nodes = try StoreReplicationTests.replicas(2, on: log)
        let armed = try Fixture.update("/", [("presence/alice", #""offline""#)])
        let done: Bool = await withCheckedContinuation { continuation in
            nodes[0].store.armDisconnect(session: "s1", write: armed) { continuation.resume(returning: $0) }
        }
        #expect(done)
        let fired: Result<WriteOutcome, StoreError>? = await withCheckedContinuation { continuation in
            nodes[0].store.fireDisconnect(session: "s1") { continuation.resume(returning: $0) }
        }
        #expect((try? fired?.get()) != nil)
        let again: Result<WriteOutcome, StoreError>? = await withCheckedContinuation { continuation in
            nodes[0].store.fireDisconnect(session: "s1") { continuation.resume(returning: $0) }
        }
        #expect(again == nil)
        for node in nodes {
            #expect(await StoreReplicationTests.waitForSequence(node.store, 3))
            #expect(await node.store.value(at: try Fixture.path("/presence/alice")) == (try Fixture.node(#""offline""#)))
        }
    }

    @Test("a node silent past the bound has its armed writes run by the survivors, once")
    func deadNode() async throws {
        let log = MemoryLog()
        let nodes = try StoreReplicationTests.replicas(2, on: log)
        // A node that armed a write and then died: its proposal is in the log, it never speaks again.
        let ghost = log.node("ghost")
        let armed = try Fixture.update("/", [("presence/bob", #""offline""#)])
        // The survivors time its silence from when they applied its entry, on their own monotonic clocks.
        let proposal = Proposal(node: "ghost", number: 1, clock: StoreConfiguration.systemClock() - 4_000,
                                operations: [.armDisconnect(node: "ghost", session: "s9", write: armed)])
        ghost.append(ProposalCodec.encode(proposal), id: proposal.id) { _ in }
        let path = try Fixture.path("/presence/bob")
        let started = ContinuousClock.now
        var fired = false
        while !fired, ContinuousClock.now - started < .seconds(30) {
            fired = await nodes.asyncMap { await $0.store.value(at: path) }.allSatisfy { $0 == (try? Fixture.node(#""offline""#)) }
            if !fired { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(fired, "the dead node's onDisconnect write did not run on every replica")
        #expect(ContinuousClock.now - started >= .milliseconds(4_500), "ran before the node was silent long enough")
        let records = nodes.map { $0.records.value.filter { $0.contains("presence") } }
        #expect(records.allSatisfy { $0.count == 1 }, "run more than once: \(records)")
    }

    @Test("a node declared down while it runs is told, proposes under a new name, and its writes count again",
          .timeLimit(.minutes(1)))
    func declaredDownWhileRunning() async throws {
        let log = MemoryLog()
        let told = Locked(0)
        var configuration = StoreConfiguration(replication: log.node("alive"))
        configuration.declaredDown = { told.withLock { $0 += 1 } }
        let alive = try Store(configuration: configuration)
        let other = try StoreReplicationTests.replicas(1, on: log)[0].store
        let armed = try Fixture.update("/", [("presence/carol", #""offline""#)])
        let registered: Bool = await withCheckedContinuation { continuation in
            alive.armDisconnect(session: "c1", write: armed) { continuation.resume(returning: $0) }
        }
        #expect(registered)
        // Another node's verdict reaches the log before the next heartbeat of "alive" does (as across a long
        // election). The judge names when it last heard "alive" in its own copy, as the presence work does; a
        // heartbeat that lands first makes the verdict stale (it changes nothing), and the judge judges again.
        var verdicts: UInt64 = 0
        while verdicts < 20, let heard = await StoreReplicationTests.presence(of: "alive", in: other).lastHeard {
            verdicts += 1
            let verdict = Proposal(node: "judge", number: verdicts, clock: StoreConfiguration.systemClock(),
                                   operations: [.nodeDown("alive", lastHeard: heard)])
            log.node("judge").append(ProposalCodec.encode(verdict), id: verdict.id) { _ in }
            #expect(await ReplicaSnapshotTests.waitUntilAsync {
                let now = await StoreReplicationTests.presence(of: "alive", in: other)
                return !now.isArmed || now.lastHeard != heard
            })
        }
        #expect(await !StoreReplicationTests.presence(of: "alive", in: other).isArmed)
        let presence = try Fixture.path("/presence/carol")
        for store in [alive, other] {
            #expect(await ReplicaSnapshotTests.waitUntilAsync {
                await store.value(at: presence) == (try? Fixture.node(#""offline""#))
            })
        }
        #expect(await ReplicaSnapshotTests.waitUntil { told.value == 1 })
        // Its later writes are applied everywhere, and it can arm again.
        let write = await alive.apply(try Fixture.set("/after", "1"))
        #expect((try? write.get()) != nil, "\(write)")
        #expect(await ReplicaSnapshotTests.waitUntilAsync {
            await other.value(at: try! Fixture.path("/after")) == (try? Fixture.node("1"))
        })
        let again: Bool = await withCheckedContinuation { continuation in
            alive.armDisconnect(session: "c1", write: try! Fixture.update("/", [("presence/carol", #""gone""#)])) {
                continuation.resume(returning: $0)
            }
        }
        #expect(again)
        let fired: Result<WriteOutcome, StoreError>? = await withCheckedContinuation { continuation in
            alive.fireDisconnect(session: "c1") { continuation.resume(returning: $0) }
        }
        #expect((try? fired?.get()) != nil)
        #expect(await ReplicaSnapshotTests.waitUntilAsync {
            await other.value(at: presence) == (try? Fixture.node(#""gone""#))
        })
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
