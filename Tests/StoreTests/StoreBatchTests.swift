import DataModel
import Dispatch
@testable import Store
import TestSupport
import Testing

/// `write(batch:completion:)`: order, atomicity, one completion per write, compare-and-set, durability.
@Suite("Store write batches")
struct StoreBatchTests {
    /// What a batch's completions reported: results by index, and the indexes in the order they completed.
    struct BatchResults: Sendable {
        var results: [Result<WriteOutcome, StoreError>?]
        var completionOrder: [Int] = []
        var duplicates: [Int] = []
    }

    /// Submits `writes` as one batch (from a dispatch queue, as the gateway would) and waits for every completion.
    static func apply(_ writes: [StoreWrite], to store: Store) async -> BatchResults {
        let collected = Locked(BatchResults(results: Array(repeating: nil, count: writes.count)))
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue(label: "batch-submitter").async {
                store.write(batch: writes, by: .privileged) { index, result in
                    let finished = collected.withLock { state in
                        if state.results[index] != nil { state.duplicates.append(index) }
                        state.results[index] = result
                        state.completionOrder.append(index)
                        return state.completionOrder.count == writes.count
                    }
                    if finished { continuation.resume() }
                }
            }
        }
        let results = collected.value
        #expect(results.duplicates == [], "a write completed more than once")
        return results
    }

    /// The number at `path` in `tree`, if any.
    static func number(at path: Path, in tree: Node) -> Double? {
        if case .number(let value)? = tree.descendant(at: path).leafValue { return value }
        return nil
    }

    @Test("a batch applies its writes in order and reports them in that order")
    func order() async throws {
        let reports = Locked<(sequences: [UInt64], values: [Path: [Double]])>(([], [:]))
        let store = try Fixture.memoryStore { record in
            reports.withLock { state in
                state.sequences.append(record.sequence)
                for change in record.changes {
                    guard case .number(let value)? = change.newValue.leafValue else { continue }
                    state.values[change.path, default: []].append(value)
                }
            }
        }
        let a = try Fixture.path("/a/v")
        let b = try Fixture.path("/b/v")
        // Sets, multi-path updates and updates at a deeper base, all to the same locations.
        let writes = try (1...90).map { n -> StoreWrite in
            switch n % 3 {
            case 0: return .set(a, Node(.number(Double(n))))
            case 1: return try Fixture.update("/", [("a/v", String(n)), ("b/v", String(n))])
            default: return try Fixture.update("/b", [("v", String(n))])
            }
        }
        let results = await Self.apply(writes, to: store)
        #expect(results.results.allSatisfy { if case .success? = $0 { true } else { false } })
        let tree = await store.tree
        #expect(Self.number(at: a, in: tree) == 90)
        #expect(Self.number(at: b, in: tree) == 89)
        let values = reports.value.values
        #expect(values[a] == (1...90).filter { $0 % 3 != 2 }.map(Double.init))
        #expect(values[b] == (1...90).filter { $0 % 3 != 0 }.map(Double.init))
        #expect(reports.value.sequences == Array(1...90), "one record per write, in log order")
    }

    @Test("multi-path writes inside batches are never seen half applied")
    func atomicInsideBatches() async throws {
        let store = try Fixture.memoryStore()
        let keys = ["k1", "k2", "k3"]
        let copies = try keys.map { try Fixture.path("\($0)/copy") }
        let violations = Locked<[String]>([])
        let done = Locked<Bool>(false)
        let readers = StoreConcurrencyTests.startReaders(store, done: done, violations: violations) { tree in
            Set(copies.map { tree.descendant(at: $0).description }).count == 1 ? nil : "unequal copies"
        }
        for batch in 0..<20 {
            let writes = try (0..<50).map { step -> StoreWrite in
                let n = batch * 50 + step
                if step % 2 == 0 { return try Fixture.update("/", keys.map { ("\($0)/copy", String(n)) }) }
                return try Fixture.set("/\(keys[step % keys.count])/single", String(n))
            }
            let results = await Self.apply(writes, to: store)
            #expect(results.results.allSatisfy { if case .success? = $0 { true } else { false } })
        }
        done.withLock { $0 = true }
        #expect(await readers.value >= 10)
        #expect(violations.value == [])
        let tree = await store.tree
        #expect(copies.allSatisfy { Self.number(at: $0, in: tree) == 998 })
    }

    @Test("every write of a batch completes once, with its own result")
    func completionPerWrite() async throws {
        let store = try Fixture.memoryStore()
        let writes: [StoreWrite] = [
            try Fixture.set("/users/alice", #"{"name":"Alice"}"#),
            .set(.node(try Fixture.path("/users/alice")), try Fixture.value("1"), expectedHash: "not-the-hash"),
            .update(try Fixture.path("/users"), []),
            try Fixture.set("/users/alice/.priority", "true"),
            try Fixture.update("/", [("rooms/r1", #""Lobby""#), ("users/bob", #""Bob""#)]),
            try Fixture.set("/", #"{"users":{"carol":1},"rooms":{"r1":"Hall"}}"#),
            .remove(try Fixture.path("/users/carol")),
        ]
        let results = await Self.apply(writes, to: store).results
        #expect(results.count == writes.count)
        #expect(results[0]?.failure == nil)
        #expect(results[1]?.failure == .stale(current: try Fixture.node(#"{"name":"Alice"}"#)))
        #expect(results[2]?.failure == nil)
        #expect(results[3]?.failure == .invalidPriority)
        #expect(results[4]?.failure == nil)
        #expect(results[5]?.failure == nil)
        if case .success(let outcome)? = results[6] {
            #expect(outcome.changes == [Change(path: try Fixture.path("/users/carol"), oldValue: Node(.number(1)),
                                               newValue: .empty)])
        } else {
            Issue.record("the removal failed: \(String(describing: results[6]))")
        }
        #expect(await store.tree == (try Fixture.node(#"{"rooms":{"r1":"Hall"}}"#)))
    }

    @Test("a compare-and-set inside a batch is checked against the writes before it")
    func compareAndSetInsideBatch() async throws {
        let store = try Fixture.memoryStore()
        let counter = try Fixture.path("/counter/value")
        let hashOfOne = Store.hash(of: Node(.number(1)))
        let writes: [StoreWrite] = [
            .set(counter, Node(.number(1))),
            .set(.node(counter), try Fixture.value("2"), expectedHash: hashOfOne),
            .set(.node(counter), try Fixture.value("3"), expectedHash: hashOfOne),
            .set(counter, Node(.number(4))),
            .set(.node(counter), try Fixture.value("5"), expectedHash: Store.hash(of: Node(.number(4)))),
        ]
        let results = await Self.apply(writes, to: store).results
        #expect(results[0]?.failure == nil)
        #expect(results[1]?.failure == nil)
        #expect(results[2]?.failure == .stale(current: Node(.number(2))))
        #expect(results[3]?.failure == nil)
        #expect(results[4]?.failure == nil)
        #expect(await store.value(at: counter) == Node(.number(5)))
    }

    @Test("a batch on a closed store fails every write as unavailable")
    func closedStore() async throws {
        let store = try Fixture.memoryStore()
        try store.close()
        let results = await Self.apply([try Fixture.set("/a", "1"), try Fixture.set("/", "2")], to: store).results
        #expect(results.allSatisfy { $0?.failure == .unavailable })
    }

    @Test("a durable batch completes in batch order and survives a restart")
    func durableBatch() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let configuration = StorePersistenceTests.configuration(directory.path)
        let store = try Store(configuration: configuration)
        var reference = ReferenceTree()
        var writes: [StoreWrite] = []
        for n in 0..<120 {
            let key = "k\(n % 5)"
            let write: StoreWrite
            switch n % 4 {
            case 0: write = try Fixture.set("/\(key)/n", String(n))
            case 1: write = .set(.node(try Fixture.path("/\(key)/n")), try Fixture.value("-1"), expectedHash: "stale")
            case 2: write = try Fixture.update("/", [("\(key)/m", String(n)), ("other/m", String(n))])
            default: write = try Fixture.set("/\(key)/inc", #"{".sv":{"increment":1}}"#)
            }
            writes.append(write)
            reference.apply(write, timestamp: Fixture.fixedTimestamp)
        }
        let results = await Self.apply(writes, to: store)
        for (index, result) in results.results.enumerated() {
            #expect((result?.failure == nil) == (index % 4 != 1), "write \(index): \(String(describing: result))")
        }
        #expect(results.completionOrder == Array(0..<120), "completions in log order")
        #expect(await store.tree == reference.root)
        try store.close()
        let reopened = try Store(configuration: configuration)
        defer { try? reopened.close() }
        #expect(await reopened.tree == reference.root)
    }

    @Test("with persistence, a rejected write never completes before a write submitted earlier")
    func rejectionsKeepTheirPlace() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(configuration: StorePersistenceTests.configuration(directory.path))
        defer { try? store.close() }
        let location = try Fixture.path("/c/value")
        let order = Locked<[Int]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue(label: "single-writer").async {
                for index in 0..<40 {
                    let write: StoreWrite = index % 2 == 0
                        ? .set(location, Node(.number(Double(index))))
                        : .set(.node(location), WriteValue(node: Node(.number(-1))), expectedHash: "stale")
                    store.write(write, by: .privileged) { _ in
                        if order.withLock({ $0.append(index); return $0.count }) == 40 { continuation.resume() }
                    }
                }
            }
        }
        #expect(order.value == Array(0..<40))
    }
}
