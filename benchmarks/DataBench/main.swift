// DataBench: throughput and memory of the DataModel hot paths (issue 3 acceptance 4).
// Run in release: swift build -c release --product DataBench && .build/release/DataBench [json|sets|window|memory|all]
import DataModel
import Foundation

// MARK: - Helpers

/// CPU time of this thread in seconds: the machine is shared, so wall-clock time would measure the neighbours.
/// (All benchmarked work is single-threaded; JSONSerialization runs on this thread too.)
func now() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Resident set size in bytes, from /proc/self/statm.
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Best of `runs` timings of `body`, in seconds.
func best(_ runs: Int, _ body: () -> Void) -> Double {
    var fastest = Double.infinity
    for _ in 0..<runs {
        let start = now()
        body()
        fastest = min(fastest, now() - start)
    }
    return fastest
}

struct Rand {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

let words = ["hello", "there", "how", "are", "you", "doing", "today", "firebase", "canopy", "swift", "tree", "node",
    "query", "window", "é", "naïve", "😀", "quote\"d", "tab\tbed", "data"]

/// A chat-like export: messages keyed by push ids with text, uid, timestamp and a like count, plus user profiles.
func makeDataset(targetBytes: Int, messagesOnly: Bool = false) -> [UInt8] {
    var random = Rand(state: 42)
    var ids = PushIDGenerator(randomNumbers: SystemRandomNumberGenerator())
    var out: [UInt8] = []
    out.reserveCapacity(targetBytes + 1024)
    out += Array(#"{"messages":{"#.utf8)
    var index = 0
    let half = messagesOnly ? targetBytes : targetBytes * 4 / 5
    while out.count < half {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        let id = ids.next(timestamp: 1_718_049_600_000 + Int64(index / 3))
        var text = ""
        for _ in 0..<(3 + random.below(8)) { text += words[random.below(words.count)] + " " }
        var writer = JSONWriter()
        writer.writeString(text)
        let message = #""\#(id)":{"text":\#(String(decoding: writer.bytes, as: UTF8.self)),"uid":"user\#(random.below(100_000))","timestamp":\#(1_718_049_600_000 + index),"likes":\#(random.below(50)),"score":\#(Double(random.below(10_000)) / 8)}"#
        out += Array(message.utf8)
        index += 1
    }
    out += Array(#"},"users":{"#.utf8)
    var user = 0
    while out.count < targetBytes {
        if user > 0 { out.append(UInt8(ascii: ",")) }
        let profile = #""user\#(user)":{"name":"User \#(user)","age":\#(18 + random.below(60)),"active":\#(random.below(2) == 0),"tags":["a","b\#(random.below(9))"],"rank":{".value":\#(random.below(1000)),".priority":\#(random.below(100))}}"#
        out += Array(profile.utf8)
        user += 1
    }
    out += Array("}}".utf8)
    return out
}

// MARK: - Benchmarks

func benchJSON(sizeMB: Int) {
    let bytes = makeDataset(targetBytes: sizeMB * 1_000_000)
    let megabytes = Double(bytes.count) / 1e6
    print("JSON: \(String(format: "%.1f", megabytes)) MB chat-like document")

    var tree = Node.empty
    let ourParse = best(3) { tree = (try? JSONReader.readData(bytes, maxBytes: Int.max))?.node ?? .empty }
    let data = Data(bytes)
    var foundationObject: Any = NSNull()
    let foundationParse = best(3) { foundationObject = (try? JSONSerialization.jsonObject(with: data)) ?? NSNull() }
    print(String(format: "  parse      canopy %7.1f MB/s   JSONSerialization %7.1f MB/s   ratio %.2fx",
        megabytes / ourParse, megabytes / foundationParse, foundationParse / ourParse))

    var output: [UInt8] = []
    let ourWrite = best(3) {
        var writer = JSONWriter(capacity: bytes.count)
        writer.writeExport(tree)
        output = writer.bytes
    }
    var foundationOutput = Data()
    let foundationWrite = best(3) { foundationOutput = (try? JSONSerialization.data(withJSONObject: foundationObject)) ?? Data() }
    print(String(format: "  serialize  canopy %7.1f MB/s   JSONSerialization %7.1f MB/s   ratio %.2fx   (out %.1f / %.1f MB)",
        Double(output.count) / 1e6 / ourWrite, Double(foundationOutput.count) / 1e6 / foundationWrite,
        (foundationWrite / Double(foundationOutput.count)) / (ourWrite / Double(output.count)),
        Double(output.count) / 1e6, Double(foundationOutput.count) / 1e6))
}

func benchSets() {
    // A shard-like tree: 100,000 users with 3 fields each; set /users/uN/score to a number.
    var random = Rand(state: 7)
    let userCount = 100_000
    var root = Node.empty
    var keys: [Key] = []
    let score = try! Key("score")
    for index in 0..<userCount {
        let key = try! Key("user\(index)")
        keys.append(key)
        let profile = Node(children: [
            ChildEntry(key: try! Key("name"), node: Node(.string("User \(index)"))),
            ChildEntry(key: score, node: Node(.number(0))),
            ChildEntry(key: try! Key("active"), node: Node(.bool(true))),
        ])
        root.setChild(key, to: profile)
    }
    let users = try! Key("users")
    var tree = Node.empty
    tree.setChild(users, to: root)
    let paths = (0..<1_000_000).map { _ in Path(keys: [users, keys[random.below(userCount)], score]) }
    let count = paths.count
    var value = 0.0
    // Warm-up: the first write into each user unpacks its record (a one-time cost measured separately).
    let firstWrites = best(1) {
        for key in keys {
            value += 1
            tree.set(Node(.number(value)), at: Path(keys: [users, key, score]))
        }
    }
    print(String(format: "first write into each of 100k packed records: %.0f ns/set", firstWrites / Double(userCount) * 1e9))
    let elapsed = best(3) {
        for path in paths {
            value += 1
            tree.set(Node(.number(value)), at: path)
        }
    }
    print(String(format: "leaf sets (in place, depth 3, 100k users): %.2f M sets/s (%.0f ns/set)", Double(count) / elapsed / 1e6, elapsed / Double(count) * 1e9))

    // The same with a snapshot held every 1000 writes (copy-on-write path copies).
    var snapshots: [Node] = []
    let shared = best(1) {
        for (index, path) in paths.enumerated() {
            if index % 1000 == 0 { snapshots = [tree] }
            value += 1
            tree.set(Node(.number(value)), at: path)
        }
    }
    _ = snapshots.count
    print(String(format: "leaf sets with a snapshot taken every 1000 writes: %.2f M sets/s", Double(count) / shared / 1e6))
}

func benchWindow() {
    let childCount = 1_000_000
    var random = Rand(state: 11)
    var ids = PushIDGenerator(randomNumbers: SystemRandomNumberGenerator())
    let scoreKey = try! Key("score")
    var entries = ContiguousArray<ChildEntry>()
    entries.reserveCapacity(childCount)
    for index in 0..<childCount {
        let key = try! Key(ids.next(timestamp: 1_700_000_000_000 + Int64(index)))
        entries.append(ChildEntry(key: key, node: Node(children: [ChildEntry(key: scoreKey, node: Node(.number(Double(random.below(1_000_000)))))])))
    }
    var location = Node(children: entries)
    entries = []
    for (name, index) in [("orderByChild(score)", QueryIndex.child(Path(keys: [scoreKey]))), ("default (priority) order", .priority)] {
        let buildStart = now()
        var childIndex = ChildIndex(index: index, over: location)
        let buildTime = now() - buildStart
        var window = QueryWindow(query: QueryParams(index: index, limit: 50, anchor: .last), index: childIndex)
        // Prepare the writes first so that only the data structures are timed: half update a random existing
        // child, half append a child with a new push id; scores are random (a new high score enters the window).
        let writes = 200_000
        var operations: [(key: Key, value: Node)] = []
        var pushTime: Int64 = 1_800_000_000_000
        for step in 0..<writes {
            let key: Key
            if step % 2 == 0 {
                key = location.child(atRank: random.below(location.childCount)).key
            } else {
                pushTime += 1
                key = try! Key(ids.next(timestamp: pushTime))
            }
            operations.append((key, Node(children: [ChildEntry(key: scoreKey, node: Node(.number(Double(random.below(1_000_000)))))])))
        }
        var events = 0
        var windowTime = 0.0
        let start = now()
        for (key, new) in operations {
            let old = location.child(key)
            location.setChild(key, to: new)
            let windowStart = now()
            childIndex.update(key: key, from: old, to: new)
            events += window.apply([ChildChange(key: key, old: old, new: new)], index: childIndex, node: location).count
            windowTime += now() - windowStart
        }
        let elapsed = now() - start
        print(String(format: "limitToLast(50), %@, %d children: index + window %.2f µs per write; with the tree write %.2f µs; %d events; index build %.2f s",
            name, location.childCount, windowTime / Double(writes) * 1e6, elapsed / Double(writes) * 1e6, events, buildTime))
    }
}

func benchMemory(sizeMB: Int, messagesOnly: Bool = false) {
    let path = "/tmp/databench-\(sizeMB)mb\(messagesOnly ? "-messages" : "").json"
    if !FileManager.default.fileExists(atPath: path) {
        let bytes = makeDataset(targetBytes: sizeMB * 1_000_000, messagesOnly: messagesOnly)
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
    }
    let fileSize = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    let before = residentBytes()
    let start = now()
    var tree = Node.empty
    do {
        // Read the file straight into one array (as a loader would), then parse it.
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return }
        let bytes = [UInt8](unsafeUninitializedCapacity: fileSize) { buffer, count in
            while count < fileSize {
                let got = read(descriptor, buffer.baseAddress! + count, fileSize - count)
                if got <= 0 { break }
                count += got
            }
        }
        close(descriptor)
        tree = (try? JSONReader.readData(bytes, maxBytes: Int.max))?.node ?? .empty
    }
    let loadTime = now() - start
    let untrimmed = residentBytes()
    // Return free heap pages (parser temporaries) to the system; glibc's malloc_trim is not in the Glibc module.
    if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
        let trim = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        _ = trim(0)
    }
    let after = residentBytes()
    print(String(format: "  RSS growth before malloc_trim: %.1f MB", Double(untrimmed - before) / 1e6))
    print(String(format: "memory: %.1f MB file → tree RSS growth %.1f MB (%.2fx file size); load (read + parse) %.2f s; %d top-level children",
        Double(fileSize) / 1e6, Double(after - before) / 1e6, Double(after - before) / Double(max(fileSize, 1)), loadTime, tree.childCount))
}

// MARK: - Main

let arguments = CommandLine.arguments.dropFirst()
let which = arguments.first ?? "all"
let sizeMB = arguments.dropFirst().first.flatMap { Int($0) }
switch which {
case "json": benchJSON(sizeMB: sizeMB ?? 50)
case "parse":  // our parser and writer only (for profiling)
    let bytes = makeDataset(targetBytes: (sizeMB ?? 50) * 1_000_000)
    var tree = Node.empty
    let parse = best(3) { tree = (try? JSONReader.readData(bytes, maxBytes: Int.max))?.node ?? .empty }
    var written = 0
    let write = best(3) {
        var writer = JSONWriter(capacity: bytes.count)
        writer.writeExport(tree)
        written = writer.bytes.count
    }
    print(String(format: "parse %.1f MB/s, serialize %.1f MB/s", Double(bytes.count) / 1e6 / parse, Double(written) / 1e6 / write))
case "sets": benchSets()
case "window": benchWindow()
case "memory": benchMemory(sizeMB: sizeMB ?? 100)
case "memory-messages": benchMemory(sizeMB: sizeMB ?? 100, messagesOnly: true)
default:
    benchJSON(sizeMB: sizeMB ?? 50)
    benchSets()
    benchWindow()
    benchMemory(sizeMB: 100)
}
