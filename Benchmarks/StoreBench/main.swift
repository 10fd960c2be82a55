// StoreBench: throughput and start-up measurements for the Store module (not a test; run a release build).
//
//   StoreBench memory [count]                 in-memory leaf sets/s on one shard and on all shards
//   StoreBench durable DIR [seconds] [writers] acknowledged writes/s with fsync always (default 5 s, 64 writers)
//   StoreBench generate FILE [megabytes]      writes a JSON export file of about that size (default 100)
//   StoreBench import FILE DIR                imports FILE into namespace directory DIR; time and peak RSS
//   StoreBench load DIR                       opens DIR (snapshot + replay); start-up time and peak RSS

import DataModel
import Dispatch
import Store
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

func now() -> Double {
    Double(DispatchTime.now().uptimeNanoseconds) / 1e9
}

/// User plus system CPU time of the whole process so far, in seconds: robust against other processes competing
/// for the cores, unlike wall-clock rates.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// Resident memory now, in megabytes (from /proc/self/statm).
func currentResidentMegabytes() -> Double {
    guard let file = fopen("/proc/self/statm", "r") else { return 0 }
    defer { fclose(file) }
    var size = 0
    var resident = 0
    guard fscanf_pair(file, &size, &resident) else { return 0 }
    return Double(resident * Int(sysconf(Int32(_SC_PAGESIZE)))) / 1_048_576
}

func fscanf_pair(_ file: UnsafeMutablePointer<FILE>, _ first: inout Int, _ second: inout Int) -> Bool {
    var buffer = [CChar](repeating: 0, count: 256)
    guard fgets(&buffer, 256, file) != nil else { return false }
    let fields = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        .split(separator: " ")
    guard fields.count >= 2, let a = Int(fields[0]), let b = Int(fields[1]) else { return false }
    first = a
    second = b
    return true
}

func peakResidentMegabytes() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024  // Linux reports kilobytes
}

func fail(_ message: String) -> Never {
    print(message)
    exit(1)
}

func key(_ text: String) -> Key {
    guard let key = try? Key(text) else { fail("invalid benchmark key \(text)") }
    return key
}

/// `value` with two decimals.
func decimal(_ value: Double) -> String {
    let hundredths = Int((value * 100).rounded())
    let fraction = hundredths % 100
    return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
}

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

func durableBenchmark(directory: String, seconds: Double, writers: Int) {
    var persistence = PersistenceConfiguration(directory: directory)
    persistence.fsyncPolicy = .always
    let layout = ShardLayout(count: StoreConfiguration.defaultShardCount)
    let store: Store
    do {
        store = try Store(configuration: StoreConfiguration(layout: layout, persistence: persistence))
    } catch {
        fail("cannot open \(directory): \(error)")
    }
    let acknowledged = Atomic<Int>(0)
    let stop = Atomic<Bool>(false)
    let finished = DispatchGroup()
    let value = Node(children: [ChildEntry(key: key("text"), node: Node(.string("hello durable world")))])
    @Sendable func next(_ writer: Int, _ index: Int) {
        if stop.load(ordering: .relaxed) {
            finished.leave()
            return
        }
        let path = Path(keys: [key("w\(writer)"), key("i\(index % 10_000)")])
        store.write(.set(path, value)) { result in
            if case .failure(let error) = result { fail("write failed: \(error)") }
            acknowledged.add(1, ordering: .relaxed)
            next(writer, index + 1)
        }
    }
    let started = now()
    for writer in 0..<writers {
        finished.enter()
        next(writer, 0)
    }
    usleep(UInt32(seconds * 1_000_000))
    stop.store(true, ordering: .relaxed)
    let count = acknowledged.load(ordering: .relaxed)
    let elapsed = now() - started
    finished.wait()
    print("durable acknowledged writes, fsync always, \(writers) concurrent writers, \(layout.count) shards: "
        + "\(Int(Double(count) / elapsed)) writes/s (\(count) in \(decimal(elapsed)) s)")
    do { try store.close() } catch { fail("close failed: \(error)") }
}

func generate(file: String, megabytes: Int) {
    guard let output = fopen(file, "w") else { fail("cannot create \(file)") }
    defer { fclose(output) }
    var written = 0
    let target = megabytes << 20
    fputs("{\"users\":{", output)
    var index = 0
    while written < target {
        let record = (index == 0 ? "" : ",")
            + "\"user\(index)\":{\"name\":\"User number \(index)\",\"age\":\(index % 90),\"active\":\(index % 2 == 0),"
            + "\"score\":\(Double(index) / 7),\"tags\":{\"a\":true,\"b\":\"tag \(index % 13)\"},\".priority\":\(index % 5)}"
        fputs(record, output)
        written += record.utf8.count
        index += 1
    }
    fputs("},\"meta\":{\"count\":\(index)}}", output)
    print("wrote \(index) users, about \(written >> 20) MB, to \(file)")
}

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "memory":
    memoryBenchmark(count: arguments.count > 2 ? Int(arguments[2]) ?? 2_000_000 : 2_000_000)
case "durable" where arguments.count >= 3:
    durableBenchmark(directory: arguments[2], seconds: arguments.count > 3 ? Double(arguments[3]) ?? 5 : 5,
                     writers: arguments.count > 4 ? Int(arguments[4]) ?? 64 : 64)
case "generate" where arguments.count >= 3:
    generate(file: arguments[2], megabytes: arguments.count > 3 ? Int(arguments[3]) ?? 100 : 100)
case "import" where arguments.count >= 4:
    let started = now()
    do {
        try OfflineTools.importJSON(file: arguments[2], directory: arguments[3], path: .root)
    } catch {
        fail("import failed: \(error)")
    }
    print("import: \(decimal(now() - started)) s wall, \(decimal(processCPUSeconds())) s CPU, "
        + "peak RSS \(Int(peakResidentMegabytes())) MB")
case "load" where arguments.count >= 3:
    let started = now()
    var persistence = PersistenceConfiguration(directory: arguments[2])
    persistence.snapshotIntervalSeconds = nil
    do {
        let store = try Store(configuration: StoreConfiguration(persistence: persistence))
        let elapsed = now() - started
        print("start-up load: \(decimal(elapsed)) s wall, \(decimal(processCPUSeconds())) s CPU, "
            + "peak RSS \(Int(peakResidentMegabytes())) MB, RSS after load \(Int(currentResidentMegabytes())) MB, "
            + "\(store.layout.count) shards")
        exit(0)  // measure loading only; the process exit releases the lock
    } catch {
        fail("load failed: \(error)")
    }
default:
    print("usage: StoreBench memory [count] | durable DIR [seconds] [writers] | generate FILE [MB] | "
        + "import FILE DIR | load DIR")
    exit(2)
}
