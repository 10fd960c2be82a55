// `StoreBench memory`: in-memory leaf sets per second on one shard and on all shards.

import DataModel
import Dispatch
import Store
import Synchronization

/// Submits `count` leaf sets spread over `threads` submitting threads and waits for every completion; returns
/// sets per wall-clock second and CPU microseconds (all threads) per set.
func measureSets(store: Store, count: Int, threads: Int, keysPerThread: Int) -> (rate: Double, cpu: Double) {
    let remaining = Atomic<Int>(count)
    let done = DispatchSemaphore(value: 0)
    let perThread = count / threads
    let started = now()
    let startedCPU = processCPUSeconds()
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
        // One top-level key per (thread, group): with the default depth 1 that selects the shard.
        let tops = (0..<keysPerThread).map { key("t\(thread)_\($0)") }
        let fields = (0..<1000).map { key("f\($0)") }
        for index in 0..<perThread {
            let path = Path(keys: [tops[index % tops.count], fields[(index / tops.count) % fields.count]])
            store.write(.set(path, Node(.number(Double(index))))) { _ in
                if remaining.subtract(1, ordering: .relaxed).newValue == 0 { done.signal() }
            }
        }
    }
    done.wait()
    let sets = Double(perThread * threads)
    return (sets / (now() - started), (processCPUSeconds() - startedCPU) * 1e6 / sets)
}

func memoryBenchmark(count: Int) {
    let cores = StoreConfiguration.defaultShardCount
    guard let single = try? Store(configuration: StoreConfiguration(layout: ShardLayout(count: 1))) else {
        fail("cannot open store")
    }
    _ = measureSets(store: single, count: count / 10, threads: 1, keysPerThread: 64)  // warm-up
    let oneShard = measureSets(store: single, count: count, threads: 1, keysPerThread: 64)
    print("in-memory leaf sets, 1 shard, 1 submitting thread: \(Int(oneShard.rate)) sets/s, "
        + "\(decimal(oneShard.cpu)) µs CPU per set (submitter + shard)")
    guard let all = try? Store(configuration: StoreConfiguration(layout: ShardLayout(count: cores))) else {
        fail("cannot open store")
    }
    _ = measureSets(store: all, count: count / 10, threads: cores, keysPerThread: 64)
    let allShards = measureSets(store: all, count: count, threads: cores, keysPerThread: 64)
    print("in-memory leaf sets, \(cores) shards, \(cores) submitting threads: \(Int(allShards.rate)) sets/s, "
        + "\(decimal(allShards.cpu)) µs CPU per set")
}
