// `StoreBench durable`: acknowledged writes per second with fsync always and pipelining writers.

import DataModel
import Dispatch
import Store
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Runs `writers` concurrent writers for `seconds` against a fresh store in `directory`, each keeping `window`
/// writes outstanding (a new write is sent as soon as one of its writes is acknowledged, as pipelining Firebase
/// clients do; `window` 1 is a closed loop). Every write goes to the writer's own top-level key; all of them take
/// their place in the namespace's one log. Prints acknowledged writes per second.
func durableBenchmark(directory: String, seconds: Double, writers: Int, window: Int) {
    var persistence = PersistenceConfiguration(directory: directory)
    persistence.fsyncPolicy = .always
    let store: Store
    do {
        store = try Store(configuration: StoreConfiguration(persistence: persistence))
    } catch {
        fail("cannot open \(directory): \(error)")
    }
    let writerKeys = (0..<writers).map { key("w\($0)") }
    let itemKeys = (0..<10_000).map { key("i\($0)") }
    let acknowledged = Atomic<Int>(0)
    let stop = Atomic<Bool>(false)
    let finished = DispatchGroup()
    let value = Node(children: [ChildEntry(key: key("text"), node: Node(.string("hello durable world")))])
    /// One of a writer's `window` chains: writes item `index`, and on its acknowledgement item `index + window`.
    @Sendable func next(_ writer: Int, _ index: Int) {
        if stop.load(ordering: .relaxed) {
            finished.leave()
            return
        }
        let path = Path(keys: [writerKeys[writer], itemKeys[index % itemKeys.count]])
        store.write(.set(path, value), by: .privileged) { result in
            if case .failure(let error) = result { fail("write failed: \(error)") }
            acknowledged.add(1, ordering: .relaxed)
            next(writer, index + window)
        }
    }
    let started = now()
    let startedCPU = processCPUSeconds()
    for writer in 0..<writers {
        for chain in 0..<window {
            finished.enter()
            next(writer, chain)
        }
    }
    usleep(UInt32(seconds * 1_000_000))
    stop.store(true, ordering: .relaxed)
    let count = acknowledged.load(ordering: .relaxed)
    let elapsed = now() - started
    let cpu = processCPUSeconds() - startedCPU
    finished.wait()
    print("durable acknowledged writes, fsync always, \(writers) writers x window \(window), one log: "
        + "\(Int(Double(count) / elapsed)) writes/s (\(count) in \(decimal(elapsed)) s, "
        + "\(decimal(cpu * 1e6 / Double(max(count, 1)))) µs CPU per write)")
    do { try store.close() } catch { fail("close failed: \(error)") }
}
