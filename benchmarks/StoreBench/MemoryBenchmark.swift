// `StoreBench memory`: in-memory leaf sets per second into one namespace log.

import DataModel
import Dispatch
import Store
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What ``measureSets(store:count:threads:keysPerThread:batch:)`` measured.
struct SetsMeasurement {
    /// Sets per wall-clock second.
    var rate: Double
    /// CPU microseconds of the whole process per set.
    var cpu: Double
    /// CPU microseconds per set outside the submitting threads: the sequencer applying the writes (plus Dispatch).
    var sequencerCPU: Double
}

/// Submits `count` leaf sets spread over `threads` submitting threads and waits for every completion. With
/// `batch` 1 every set is its own `write(_:completion:)`; otherwise sets go in `write(batch:completion:)` calls of
/// `batch` sets each, as the gateway submits the writes of one read from a connection.
func measureSets(store: Store, count: Int, threads: Int, keysPerThread: Int, batch: Int) -> SetsMeasurement {
    let perThread = count / threads / batch * batch
    let remaining = Atomic<Int>(perThread * threads)
    let done = DispatchSemaphore(value: 0)
    let started = now()
    let startedCPU = processCPUSeconds()
    let submitterNanoseconds = Atomic<Int>(0)
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
        let threadStarted = threadCPUNanoseconds()
        defer { submitterNanoseconds.add(threadCPUNanoseconds() - threadStarted, ordering: .relaxed) }
        // One top-level key per (thread, group).
        let tops = (0..<keysPerThread).map { key("t\(thread)_\($0)") }
        let fields = (0..<1000).map { key("f\($0)") }
        func write(_ index: Int) -> StoreWrite {
            .set(Path(keys: [tops[index % tops.count], fields[(index / tops.count) % fields.count]]),
                 Node(.number(Double(index))))
        }
        if batch == 1 {
            for index in 0..<perThread {
                store.write(write(index), by: .privileged) { _ in
                    if remaining.subtract(1, ordering: .relaxed).newValue == 0 { done.signal() }
                }
            }
            return
        }
        var writes: [StoreWrite] = []
        writes.reserveCapacity(batch)
        for index in 0..<perThread {
            writes.append(write(index))
            if writes.count == batch {
                store.write(batch: writes, by: .privileged) { _, _ in
                    if remaining.subtract(1, ordering: .relaxed).newValue == 0 { done.signal() }
                }
                writes.removeAll(keepingCapacity: true)
            }
        }
    }
    done.wait()
    let sets = Double(perThread * threads)
    let elapsed = now() - started
    let cpu = processCPUSeconds() - startedCPU
    let submitters = Double(submitterNanoseconds.load(ordering: .relaxed)) / 1e9
    return SetsMeasurement(rate: sets / elapsed, cpu: cpu * 1e6 / sets, sequencerCPU: (cpu - submitters) * 1e6 / sets)
}

/// CPU time of the calling thread, in nanoseconds.
func threadCPUNanoseconds() -> Int {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return time.tv_sec * 1_000_000_000 + time.tv_nsec
}

/// One result line: wall rate, CPU per set, and the sequencer side's CPU per set with the rate it would allow on a
/// core of its own (what the wall rate shows on an idle machine).
func report(_ label: String, _ result: SetsMeasurement) {
    print("\(label): \(Int(result.rate)) sets/s, \(decimal(result.cpu)) µs CPU per set, "
        + "sequencer \(decimal(result.sequencerCPU)) µs CPU per set (\(Int(1e6 / result.sequencerCPU)) sets per core-second)")
}

/// Prints leaf sets per second into one namespace log from one submitting thread and from one per core, for
/// each batch size.
func memoryBenchmark(count: Int, batches: [Int]) {
    let cores = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    for batch in batches {
        for threads in Set([1, cores]).sorted() {
            guard let store = try? Store(configuration: StoreConfiguration()) else { fail("cannot open store") }
            _ = measureSets(store: store, count: count / 10, threads: threads, keysPerThread: 64, batch: batch)
            let result = measureSets(store: store, count: count, threads: threads, keysPerThread: 64, batch: batch)
            report("in-memory leaf sets, batch \(batch), one log, \(threads) submitting threads", result)
        }
    }
}
