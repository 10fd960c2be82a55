import Authorization
import DataModel
import Dispatch
import Foundation
import Gateway
import PropertyBased
import Store
import Synchronization
import TestSupport
import Testing

/// The namespace log is deterministic: a random workload under real security rules (reading `root`, `auth`, `now`
/// and `data`), with server timestamps, increments, compare-and-sets, pushes, rules revisions and a clock that
/// jumps back and forth, is applied live; then the journal is replayed into a fresh state and the namespace is
/// reopened from disk. Both must give the same root hash and the same accept/reject decision for every write.
@Suite("Namespace log replay")
struct LogReplayPropertyTests {
    static let strictRules = #"""
        {"rules": {
          "profiles": {"$uid": {".write": "auth != null && auth.uid == $uid"}},
          "posts": {"$p": {
            ".write": "auth != null && root.child('profiles/' + auth.uid).exists()",
            ".validate": "!newData.exists() || (newData.child('at').val() <= now && newData.child('by').val() == auth.uid)"
          }},
          "counters": {"$c": {".write": "auth != null", ".validate": "newData.isNumber() && newData.val() < 40"}},
          "stamps": {"$s": {".write": "auth != null && (!data.exists() || data.val() < now)"}}
        }}
        """#
    static let ownerRules = #"""
        {"rules": {
          "$any": {".write": "auth != null && auth.uid == 'u1'"}
        }}
        """#

    /// What a write's completion (or its replay) said, comparable across runs.
    static func decision(_ result: Result<WriteOutcome, StoreError>) -> String {
        switch result {
        case .success: return "ok"
        case .failure(let error): return "\(error)"
        }
    }

    /// A clock that moves by random steps, sometimes backwards (the log must never go back).
    final class JumpyClock: Sendable {
        private let state: Mutex<(now: Double, random: SplitMix64)>
        init(seed: UInt64) { state = Mutex((1_700_000_000_000, SplitMix64(seed: seed))) }
        func read() -> Double {
            state.withLock { state in
                state.now += Double(Int.random(in: -30...50, using: &state.random))
                return state.now
            }
        }
    }

    struct Workload {
        var random: SplitMix64
        let users = ["u1", "u2", "u3"]

        mutating func caller() -> WriteCaller {
            switch Int.random(in: 0..<10, using: &random) {
            case 0: return .privileged
            case 1: return .user(auth: nil)
            default:
                let uid = users.randomElement(using: &random) ?? "u1"
                return .user(auth: .object([("uid", .string(uid)), ("provider", .string("custom"))]))
            }
        }

        mutating func uid(of caller: WriteCaller) -> String {
            if case .user(let auth?) = caller, case .string(let uid)? = auth["uid"] { return uid }
            return users.randomElement(using: &random) ?? "u1"
        }

        /// A random write; `current` reads the live tree (for compare-and-sets that sometimes match).
        mutating func write(by caller: WriteCaller, current: (Path) -> Node) throws -> StoreWrite {
            let uid = uid(of: caller)
            switch Int.random(in: 0..<9, using: &random) {
            case 0:
                let value = Bool.random(using: &random) ? #"{"name":"\#(uid)"}"# : "null"
                return .set(try Path("/profiles/\(uid)"), try writeValue(value).node)
            case 1:
                let post = Int.random(in: 0..<6, using: &random)
                return .set(.node(try Path("/posts/p\(post)")),
                            try writeValue(#"{"at":{".sv":"timestamp"},"by":"\#(uid)"}"#), expectedHash: nil)
            case 2:
                return .push(try Path("/posts"), try writeValue(#"{"at":{".sv":"timestamp"},"by":"\#(uid)"}"#))
            case 3:
                let counter = try Path("/counters/c\(Int.random(in: 0..<3, using: &random))")
                return .set(.node(counter), try writeValue(#"{".sv":{"increment":3}}"#), expectedHash: nil)
            case 4:
                let counter = try Path("/counters/c\(Int.random(in: 0..<3, using: &random))")
                let hash = Bool.random(using: &random) ? Store.hash(of: current(counter)) : "wrong"
                let next = Double(Int.random(in: 0..<45, using: &random))
                return .set(.node(counter), WriteValue(node: Node(.number(next))), expectedHash: hash)
            case 5:
                return .set(.node(try Path("/stamps/s\(Int.random(in: 0..<3, using: &random))")),
                            try writeValue(#"{".sv":"timestamp"}"#), expectedHash: nil)
            case 6:
                let entries = [
                    UpdateEntry(.node(try Path("/profiles/\(uid)/seen")), try writeValue(#"{".sv":"timestamp"}"#)),
                    UpdateEntry(.node(try Path("/counters/c0")), try writeValue(#"{".sv":{"increment":1}}"#)),
                ]
                return .update(.root, entries)
            case 7:
                return .set(.node(try Path("/posts/p\(Int.random(in: 0..<6, using: &random))")),
                            WriteValue(node: .empty), expectedHash: nil)
            default:
                return .update(try Path("/posts"), [
                    UpdateEntry(.node(try Path("/p\(Int.random(in: 0..<6, using: &random))/by")),
                                WriteValue(node: Node(.string(uid)))),
                ])
            }
        }
    }

    static func root(of store: Store) async -> Node {
        await withCheckedContinuation { continuation in store.read(.root) { continuation.resume(returning: $0) } }
    }

    static func open(_ directory: String, clock: @escaping @Sendable () -> Double) throws -> Store {
        var persistence = PersistenceConfiguration(directory: directory)
        persistence.fsyncPolicy = .none
        persistence.snapshotIntervalSeconds = nil
        return try Store(configuration: StoreConfiguration(
            persistence: persistence, clock: clock, rulesCompiler: RulesPolicy.offlineCompiler))
    }

    @Test("random workloads under rules replay to the same tree and the same decisions")
    func replayIsDeterministic() async throws {
        await propertyCheck(count: 12, input: Gen.int(in: 0...Int.max)) { seed in
            do {
                try await Self.check(seed: UInt64(seed))
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
    }

    static func check(seed: UInt64) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("canopy-replay-\(seed)-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = JumpyClock(seed: seed)
        let store = try open(directory.path, clock: { clock.read() })
        var workload = Workload(random: SplitMix64(seed: seed))
        var live: [String] = []
        var kinds: [String: Int] = [:]
        for step in 0..<400 {
            if step % 60 == 0 {
                let source: [UInt8]? = [Array(strictRules.utf8), Array(ownerRules.utf8), nil][(step / 60) % 3]
                await withCheckedContinuation { continuation in
                    store.installRules(source: source) { _ in continuation.resume() }
                }
            }
            let tree = await root(of: store)
            let caller = workload.caller()
            let write = try workload.write(by: caller) { tree.descendant(at: $0) }
            let result = await withCheckedContinuation { continuation in
                store.write(write, by: caller) { continuation.resume(returning: $0) }
            }
            live.append(decision(result))
            kinds[decision(result), default: 0] += 1
        }
        let liveRoot = await root(of: store)
        // Both outcomes must occur, or the workload proves nothing about decisions.
        #expect((kinds["ok"] ?? 0) > 50 && (kinds["permission denied"] ?? 0) > 20, "seed \(seed): \(kinds)")
        store.abandonForTesting()

        // Replayed entry by entry into a fresh state.
        let (snapshotSequence, entries) = try OfflineTools.journalEntries(directory: directory.path)
        #expect(snapshotSequence == 0)
        var state = LogState(compiler: RulesPolicy.offlineCompiler)
        var replayed: [String] = []
        var previousTimestamp = -Double.infinity
        for entry in entries {
            #expect(entry.timestamp >= previousTimestamp, "seed \(seed): time went back at \(entry.sequence)")
            previousTimestamp = entry.timestamp
            switch state.apply(entry, isReplay: true) {
            case .applied: replayed.append("ok")
            case .rejected(let error): replayed.append("\(error)")
            case .rulesInstalled, .presenceChanged: break
            }
        }
        let firstDifference = zip(replayed, live).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(replayed.count == live.count && firstDifference == nil,
                "seed \(seed): decision \(firstDifference ?? -1) of \(live.count) differs")
        #expect(Store.hash(of: state.root) == Store.hash(of: liveRoot), "seed \(seed): trees differ")

        // And through the real start-up path.
        let reopened = try open(directory.path, clock: { 0 })
        defer { try? reopened.close() }
        #expect(reopened.loadReport.replayedRecords == entries.count)
        #expect(Store.hash(of: await root(of: reopened)) == Store.hash(of: liveRoot), "seed \(seed): reopened differs")
    }
}
