// `StoreBench ordering`: what the namespace's single order costs per write.

import DataModel
import Dispatch
import Store
import Synchronization

/// Applies `count` leaf sets three ways and prints ns per write:
/// 1. the state transition alone (``LogState/apply(_:isReplay:)`` in a loop: the tree work every order needs);
/// 2. the same sets sequenced by a store in `write(batch:)` calls of `batch` (entry, time stamp, observer call,
///    one queue hop per batch, completions delivered in log order);
/// 3. as 2 with an observer that, like the gateway, looks the change up in a mutex-guarded table.
/// The difference between 2 and 1 is the cost of ordering: sequencing plus in-order delivery.
func orderingBenchmark(count: Int, batch: Int) {
    let keys = (0..<64).map { key("k\($0)") }
    let fields = (0..<1000).map { key("f\($0)") }
    func write(_ index: Int) -> StoreWrite {
        .set(Path(keys: [keys[index % keys.count], fields[(index / keys.count) % fields.count]]),
             Node(.number(Double(index))))
    }
    let writes = (0..<count).map(write)

    var state = LogState(compiler: nil)
    let started = now()
    for (index, write) in writes.enumerated() {
        _ = state.apply(LogEntry(sequence: UInt64(index + 1), timestamp: 1,
                                 operation: .write(write, caller: .privileged, rulesVersion: 0)))
    }
    let pure = (now() - started) * 1e9 / Double(count)

    func sequenced(observer: (@Sendable (ChangeRecord) -> Void)?) -> Double {
        guard let store = try? Store(configuration: StoreConfiguration(), observer: observer) else {
            fail("cannot open store")
        }
        let remaining = Atomic<Int>(count / batch)
        let done = DispatchSemaphore(value: 0)
        let started = now()
        DispatchQueue(label: "submitter").async {
            for start in stride(from: 0, to: count / batch * batch, by: batch) {
                store.write(batch: Array(writes[start..<(start + batch)]), by: .privileged) { index, _ in
                    if index == batch - 1, remaining.subtract(1, ordering: .relaxed).newValue == 0 { done.signal() }
                }
            }
        }
        done.wait()
        return (now() - started) * 1e9 / Double(count / batch * batch)
    }
    let ordered = sequenced(observer: nil)
    let table = Mutex<[Path: Int]>([:])
    let observed = sequenced { record in table.withLock { $0[record.changes[0].path, default: 0] += 1 } }
    print("ordering cost, \(count) leaf sets, batches of \(batch): state transition alone \(decimal(pure)) ns/write; "
        + "sequenced \(decimal(ordered)) ns/write (ordering +\(decimal(ordered - pure)) ns); "
        + "with an observer \(decimal(observed)) ns/write")
}
