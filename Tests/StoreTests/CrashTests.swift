import DataModel
import Foundation
@testable import Store
import StoreCrashWorkload
import TestSupport
import Testing

/// Acceptance 3 of issue 3: a child process (`StoreCrashWriter`) writes with fsync `always` and is killed with
/// SIGKILL at random moments, 50 times; after every kill the namespace must open, contain every acknowledged
/// write, and equal the reference tree rebuilt from the writes found in it (each present write whole).
@Suite("Store crash recovery", .serialized)
struct CrashTests {
    static let runs = 50

    static func crashWriterPath() -> String? {
        var candidates: [String] = []
        if let runner = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: runner).deletingLastPathComponent().path + "/StoreCrashWriter")
        }
        var root = #filePath
        while let slash = root.lastIndex(of: "/"), !root.hasSuffix("/Tests") { root = String(root[..<slash]) }
        root = String(root.dropLast("/Tests".count))
        candidates += [root + "/.build/debug/StoreCrashWriter", root + "/.build/release/StoreCrashWriter"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs the child until `delay` after it is ready, kills it, and returns the ids it acknowledged.
    static func runChild(_ executable: String, directory: String, run: Int, delayMilliseconds: Int) throws
        -> (acknowledged: [Int], problems: [String])
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [directory, String(run)]
        let pipe = Pipe()
        process.standardOutput = pipe
        let output = Locked<[UInt8]>([])
        let ready = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        try process.run()
        let reader = pipe.fileHandleForReading
        Thread.detachNewThread {
            var signalled = false
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                let sawReady = output.withLock { buffer in
                    buffer.append(contentsOf: chunk)
                    return String(decoding: buffer, as: UTF8.self).contains("READY\n")
                }
                if sawReady && !signalled {
                    signalled = true
                    ready.signal()
                }
            }
            if !signalled { ready.signal() }
            finished.signal()
        }
        if ready.wait(timeout: .now() + 60) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return ([], ["run \(run): the child did not become ready"])
        }
        usleep(UInt32(delayMilliseconds * 1000))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        _ = finished.wait(timeout: .now() + 30)
        var acknowledged: [Int] = []
        var problems: [String] = []
        let text = output.withLock { String(decoding: $0, as: UTF8.self) }
        for line in text.split(separator: "\n") {
            if line.hasPrefix("ACK "), let id = Int(line.dropFirst(4)) {
                acknowledged.append(id)
            } else if line.hasPrefix("FAILED") || line.hasPrefix("OPEN FAILED") {
                problems.append("run \(run): \(line)")
            }
        }
        if !text.contains("READY\n") { problems.append("run \(run): \(text)") }
        return (acknowledged, problems)
    }

    /// The ids of the writes present in `tree`, with a problem for every write present only in part.
    static func presentWrites(in tree: Node) -> (ids: Set<Int>, problems: [String]) {
        var ids = Set<Int>()
        var firstHalves = Set<Int>()
        var secondHalves = Set<Int>()
        func writeIds(under key: String, prefix: String) -> [Int] {
            tree.children.filter { $0.key.string.hasPrefix(key) }.flatMap { entry in
                entry.node.children.compactMap { Int($0.key.string.dropFirst(prefix.count)) }
            }
        }
        for id in writeIds(under: "s", prefix: "w") { ids.insert(id) }
        for id in writeIds(under: "cas", prefix: "k") { ids.insert(id) }
        for id in writeIds(under: "inc", prefix: "i") { ids.insert(id) }
        firstHalves.formUnion(writeIds(under: "a", prefix: "u"))
        secondHalves.formUnion(writeIds(under: "b", prefix: "u"))
        ids.formUnion(firstHalves.union(secondHalves))
        let partial = firstHalves.symmetricDifference(secondHalves)
        return (ids, partial.sorted().map { "write \($0) is only partly present" })
    }

    @Test("SIGKILL at random moments never loses an acknowledged write nor leaves a partial one")
    func killFiftyTimes() async throws {
        let executable = try #require(Self.crashWriterPath(), "build the StoreCrashWriter product first")
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let namespace = directory.path + "/ns"
        var random = SplitMix64(seed: 2024)
        var acknowledged = Set<Int>()
        for run in 0..<Self.runs {
            let delay = Int.random(in: 5...250, using: &random)
            let child = try Self.runChild(executable, directory: namespace, run: run, delayMilliseconds: delay)
            #expect(child.problems == [])
            acknowledged.formUnion(child.acknowledged)

            var persistence = PersistenceConfiguration(directory: namespace)
            persistence.snapshotIntervalSeconds = nil
            let store = try Store(configuration: StoreConfiguration(persistence: persistence))
            let tree = await store.tree
            let present = Self.presentWrites(in: tree)
            #expect(present.problems == [], "run \(run)")
            let missing = acknowledged.subtracting(present.ids)
            #expect(missing.isEmpty, "run \(run): acknowledged writes missing after restart: \(missing.sorted())")
            var reference = ReferenceTree()
            for id in present.ids.sorted() {
                reference.apply(CrashWorkload.write(id), timestamp: Fixture.fixedTimestamp)
            }
            #expect(tree == reference.root, "run \(run): the tree differs from the reference")
            // Alternate between a clean close (snapshot) and leaving the journals for the next child to replay.
            if run % 2 == 0 { try store.close() } else { store.abandonForTesting() }
            if !missing.isEmpty || tree != reference.root { return }
        }
        #expect(acknowledged.count > Self.runs, "the child acknowledged writes")
    }
}
