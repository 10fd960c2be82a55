import TestSupport
import DataModel
import Dispatch
import Store
import Testing

/// Multi-path writes from several queues at once, with readers running concurrently: no reader may ever see
/// part of a write.
@Suite("Store concurrency")
struct StoreConcurrencyTests {
    /// Distinct top-level keys.
    static func keys(_ count: Int) -> [String] {
        (0..<count).map { "k\($0)" }
    }

    /// Applies `writes` (one list per writer) from one dispatch queue per writer, all writers at once; returns the
    /// errors.
    static func runWriters(_ store: Store, _ writes: [[StoreWrite]]) async -> [String] {
        let errors = Locked<[String]>([])
        await withTaskGroup(of: Void.self) { group in
            for (writer, list) in writes.enumerated() {
                group.addTask {
                    let queue = DispatchQueue(label: "writer.\(writer)")
                    for write in list {
                        let result: Result<WriteOutcome, StoreError> = await withCheckedContinuation { continuation in
                            queue.async { store.write(write, by: .privileged) { continuation.resume(returning: $0) } }
                        }
                        if case .failure(let error) = result { errors.withLock { $0.append("\(error)") } }
                    }
                }
            }
        }
        return errors.withLock { $0 }
    }

    /// Reads the whole tree over and over until `done`, checking `invariant` on every read.
    static func startReaders(_ store: Store, done: Locked<Bool>, violations: Locked<[String]>,
                             invariant: @escaping @Sendable (Node) -> String?) -> Task<Int, Never> {
        Task.detached {
            var reads = 0
            while !done.value || reads < 10 {
                let tree = await store.tree
                reads += 1
                if let problem = invariant(tree) { violations.withLock { $0.append("read \(reads): \(problem)") } }
            }
            return reads
        }
    }

    @Test("concurrent multi-path updates are never seen half applied by readers")
    func atomicUpdatesUnderConcurrentReaders() async throws {
        let store = try Fixture.memoryStore()
        let keys = Self.keys(3)
        let writerCount = 4
        let writesPerWriter = 300
        let slots = try (0..<writerCount).map { writer in try keys.map { try Fixture.path("\($0)/w\(writer)") } }
        let writes = try (0..<writerCount).map { writer in
            try (1...writesPerWriter).map { n in try Fixture.update("/", keys.map { ("\($0)/w\(writer)", String(n)) }) }
        }
        let violations = Locked<[String]>([])
        let done = Locked<Bool>(false)
        let readers = Self.startReaders(store, done: done, violations: violations) { tree in
            for copies in slots where Set(copies.map { tree.descendant(at: $0).description }).count != 1 {
                return "unequal copies \(copies.map { tree.descendant(at: $0) })"
            }
            return nil
        }
        let errors = await Self.runWriters(store, writes)
        done.withLock { $0 = true }
        #expect(await readers.value >= 10)
        #expect(errors == [])
        #expect(violations.withLock { $0 } == [])
        let tree = await store.tree
        for copies in slots {
            #expect(copies.allSatisfy { tree.descendant(at: $0) == Node(.number(Double(writesPerWriter))) })
        }
    }

    @Test("concurrent transfers between locations keep the total for every reader")
    func transfersKeepTheTotal() async throws {
        let keys = Self.keys(4)
        let balances = try keys.map { try Fixture.path("\($0)/balance") }
        let store = try Fixture.memoryStore()
        let initial = keys.map { "\"\($0)\":{\"balance\":100}" }.joined(separator: ",")
        await store.applyOrFail(try Fixture.set("/", "{\(initial)}"))
        let writes = try (0..<4).map { writer in
            var random = SplitMix64(seed: UInt64(writer + 1))
            return try (0..<250).map { _ in
                let from = Int.random(in: 0..<keys.count, using: &random)
                let to = (from + Int.random(in: 1..<keys.count, using: &random)) % keys.count
                return try Fixture.update("/", [
                    ("\(keys[from])/balance", #"{".sv":{"increment":-1}}"#),
                    ("\(keys[to])/balance", #"{".sv":{"increment":1}}"#),
                ])
            }
        }
        @Sendable func total(_ tree: Node) -> Double {
            balances.reduce(0) { sum, path in
                if case .number(let value)? = tree.descendant(at: path).leafValue { return sum + value }
                return sum
            }
        }
        let violations = Locked<[String]>([])
        let done = Locked<Bool>(false)
        let readers = Self.startReaders(store, done: done, violations: violations) { tree in
            total(tree) == 400 ? nil : "total \(total(tree))"
        }
        let errors = await Self.runWriters(store, writes)
        done.withLock { $0 = true }
        _ = await readers.value
        #expect(errors == [])
        #expect(violations.withLock { $0 } == [])
        #expect(total(await store.tree) == 400)
    }

    @Test("writes submitted from one queue apply in order, and a completed write is visible to the next read")
    func orderAndVisibility() async throws {
        let store = try Fixture.memoryStore()
        let location = try Fixture.path("/k/value")
        // Alternate sets and multi-path updates of the same location.
        let writes = try (1...200).map { n in
            n % 2 == 0 ? StoreWrite.set(location, Node(.number(Double(n))))
                : try Fixture.update("/", [("k/value", String(n)), ("other\(n % 7)", "1")])
        }
        let seen = Locked<[(written: Int, read: Double)]>([])
        let queue = DispatchQueue(label: "single-writer")
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let remaining = Locked<Int>(writes.count)
            queue.async {
                for (index, write) in writes.enumerated() {
                    store.write(write, by: .privileged) { _ in
                        store.read(location) { node in
                            if case .number(let value)? = node.leafValue {
                                seen.withLock { $0.append((index + 1, value)) }
                            }
                            if remaining.withLock({ $0 -= 1; return $0 }) == 0 {
                                continuation.resume()
                            }
                        }
                    }
                }
            }
        }
        let pairs = seen.withLock { $0 }
        #expect(pairs.count == 200)
        #expect(pairs.allSatisfy { Double($0.written) <= $0.read }, "a read missed the write completed before it")
        #expect(await store.value(at: location) == Node(.number(200)))
    }
}
