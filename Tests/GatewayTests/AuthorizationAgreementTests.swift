import Authorization
import DataModel
@testable import Gateway
import PropertyBased
import Synchronization
import Rules
@testable import Store
import TestSupport
import Testing

/// One authorization path: for random writes (sets, updates, pushes, priorities of every JSON type, server
/// timestamps and increments) under rules that read `root`, `data`, `newData`, `now` and `auth` and carry
/// `.validate`, the namespace log, the onDisconnect pre-check and the console's simulator give the same decision.
@Suite("Authorization agreement")
struct AuthorizationAgreementTests {
    static let rulesSource = #"""
        {"rules": {
          "items": {"$id": {
            ".read": "auth != null",
            ".write": "auth != null && (!data.exists() || data.child('owner').val() == auth.uid)",
            ".validate": "!newData.exists() || newData.getPriority() == null || newData.getPriority() == 'top' || newData.getPriority() < 100",
            "owner": {".validate": "newData.val() == auth.uid"},
            "score": {".validate": "newData.isNumber() && (!data.exists() || newData.val() >= data.val())"},
            "at": {".validate": "newData.val() <= now"}
          }},
          "ranked": {"$r": {
            ".write": "auth != null && root.child('open').val() == true",
            ".validate": "newData.getPriority() != 'blocked' && (newData.getPriority() == null || newData.getPriority() != data.getPriority() || newData.val() != data.val())"
          }},
          "open": {".write": "auth != null && auth.uid == 'admin'", ".validate": "newData.isBoolean()"}
        }}
        """#

    /// What a path answered: `allowed`, `denied`, or `invalid` when the write cannot be applied at all.
    enum Outcome: Equatable, CustomStringConvertible {
        case allowed, denied, invalid
        var description: String {
            switch self {
            case .allowed: return "allowed"
            case .denied: return "denied"
            case .invalid: return "invalid"
            }
        }
    }

    /// One random case: the tree before, who writes, when, and what.
    struct Case: CustomStringConvertible {
        let data: Node
        let auth: JSONValue?
        let now: Double
        let write: StoreWrite

        var description: String {
            "write \(write) by \(auth.map { "\($0)" } ?? "null") at \(now) on \(json(data))"
        }
    }

    struct GeneratorError: Error { let json: String; let error: String }

    struct Generator {
        var random: SplitMix64
        let users = ["u1", "u2", "admin"]

        func writeValue(_ text: String) throws -> WriteValue {
            do { return try GatewayTests.writeValue(text) } catch { throw GeneratorError(json: text, error: "\(error)") }
        }

        func node(_ text: String) throws -> Node {
            do { return try GatewayTests.node(text) } catch { throw GeneratorError(json: text, error: "\(error)") }
        }

        mutating func pick<T>(_ choices: [T]) -> T {
            choices[Int.random(in: 0..<choices.count, using: &random)]
        }

        mutating func priorityJSON() -> String {
            pick([#"5"#, #"150"#, #""top""#, #""blocked""#, #""a""#, "true", "false", #"{"x":1}"#, "null", "[1]",
                  #"{".sv":"timestamp"}"#, #"{".sv":{"increment":1}}"#, #"{".sv":{"increment":-200}}"#])
        }

        mutating func priorityMember() -> String {
            pick(["", #",".priority":7"#, #",".priority":"top""#, #",".priority":"blocked""#, #",".priority":500"#])
        }

        mutating func valueJSON(forLeaf leaf: String) -> String {
            switch leaf {
            case "owner": return pick([#""u1""#, #""u2""#, "null", "3"])
            case "score": return pick(["1", "4", "9", #""x""#, #"{".sv":{"increment":2}}"#, #"{".sv":{"increment":-9}}"#, "null"])
            case "at": return pick([#"{".sv":"timestamp"}"#, "1", "99999999999999", "null"])
            default: return pick(["true", "false", "1", "null"])
            }
        }

        mutating func itemJSON() -> String {
            let owner = pick(["u1", "u2"])
            let score = pick(["1", "5", #"{".sv":{"increment":1}}"#])
            return pick([
                #"{"owner":"\#(owner)","score":\#(score)\#(priorityMember())}"#,
                #"{"owner":"\#(owner)","at":{".sv":"timestamp"}\#(priorityMember())}"#,
                #"{".value":{"owner":"\#(owner)"}\#(priorityMember())}"#,
                "null", "7", #"{".sv":{"increment":3}}"#,
            ])
        }

        mutating func dataJSON() -> String {
            func item(_ id: Int, _ generator: inout Generator) -> String {
                let owner = generator.pick(["u1", "u2"])
                let priority = generator.pick(["", #",".priority":3"#, #",".priority":"top""#, #",".priority":120"#])
                return #""i\#(id)":{"owner":"\#(owner)","score":\#(id + 2),"at":5\#(priority)}"#
            }
            func ranked(_ id: Int, _ generator: inout Generator) -> String {
                let priority = generator.pick(["", #",".priority":1"#, #",".priority":"a""#])
                return #""r\#(id)":{".value":\#(id)\#(priority)}"#
            }
            let open = pick(["true", "false"])
            return #"{"items":{\#(item(0, &self)),\#(item(1, &self))},"ranked":{\#(ranked(0, &self)),\#(ranked(1, &self))},"open":\#(open)}"#
        }

        mutating func write() throws -> StoreWrite {
            let item = "items/i\(Int.random(in: 0...2, using: &random))"
            let ranked = "ranked/r\(Int.random(in: 0...2, using: &random))"
            switch Int.random(in: 0..<8, using: &random) {
            case 0:
                return .set(.node(try Path(item)), try writeValue(itemJSON()), expectedHash: nil)
            case 1:
                let leaf = pick(["owner", "score", "at"])
                return .set(.node(try Path("\(item)/\(leaf)")), try writeValue(valueJSON(forLeaf: leaf)), expectedHash: nil)
            case 2:
                return .set(.priority(of: try Path(pick([item, ranked]))), try writeValue(priorityJSON()), expectedHash: nil)
            case 3:
                return .set(.node(try Path(ranked)), try writeValue(pick(["1", "2", #"{".value":2,".priority":"blocked"}"#,
                                                                         #"{".value":1,".priority":1}"#, "null"])),
                            expectedHash: nil)
            case 4:
                return .push(try Path("items"), try writeValue(itemJSON()))
            case 5:
                return .set(.node(try Path("open")), try writeValue(pick(["true", "false", "1"])), expectedHash: nil)
            default:
                var entries: [UpdateEntry] = []
                let base = try Path(pick(["", "items", item]))
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let entry: UpdateEntry
                    switch (base.depth, Int.random(in: 0..<3, using: &random)) {
                    case (0, 0): entry = UpdateEntry(.node(try Path(item)), try writeValue(itemJSON()))
                    case (0, 1): entry = UpdateEntry(.priority(of: try Path(ranked)), try writeValue(priorityJSON()))
                    case (0, _): entry = UpdateEntry(.node(try Path("\(item)/score")), try writeValue(valueJSON(forLeaf: "score")))
                    case (1, 0): entry = UpdateEntry(.node(try Path("i\(Int.random(in: 0...2, using: &random))")), try writeValue(itemJSON()))
                    case (1, _): entry = UpdateEntry(.priority(of: try Path("i\(Int.random(in: 0...2, using: &random))")), try writeValue(priorityJSON()))
                    default:
                        let leaf = pick(["owner", "score", "at"])
                        entry = Bool.random(using: &random)
                            ? UpdateEntry(.node(try Path(leaf)), try writeValue(valueJSON(forLeaf: leaf)))
                            : UpdateEntry(.priority(of: .root), try writeValue(priorityJSON()))
                    }
                    if !entries.contains(where: { $0.target == entry.target }) { entries.append(entry) }
                }
                return .update(base, entries)
            }
        }

        mutating func next() throws -> Case {
            let data = try node(dataJSON())
            let auth: JSONValue? = pick([nil, "u1", "u2", "admin"]).map { .object([("uid", .string($0))]) }
            let now = Double(pick([4, 1_700_000_000_000]))
            return Case(data: data, auth: auth, now: now, write: try write())
        }
    }

    @Test("the log, the onDisconnect pre-check and the simulator decide every write alike")
    func threePathsAgree() async throws {
        let tally = Mutex<[String: Int]>([:])
        await propertyCheck(count: 2_000, input: Gen.int(in: 0...Int.max)) { seed in
            var generator = Generator(random: SplitMix64(seed: UInt64(seed)))
            do {
                let testCase = try generator.next()
                let log = try Self.logDecision(testCase)
                let preCheck = try Self.preCheckDecision(testCase)
                let simulator = try Self.simulatorDecision(testCase)
                tally.withLock { $0[log.description, default: 0] += 1 }
                #expect(log == preCheck && log == simulator,
                        "log \(log), onDisconnect pre-check \(preCheck), simulator \(simulator): \(testCase)")
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
        // The workload reaches every kind of decision, each in a good share of the cases.
        let counts = tally.withLock { $0 }
        #expect(counts.values.reduce(0, +) >= 2_000)
        for outcome in [Outcome.allowed, .denied, .invalid] {
            #expect(counts[outcome.description, default: 0] >= 100, "\(counts)")
        }
    }

    // MARK: - the three paths

    static let rulesRevision = RulesRevision(version: 1, source: Array(rulesSource.utf8))

    /// The namespace log's decision: the write sequenced under the rules.
    static func logDecision(_ testCase: Case) throws -> Outcome {
        var state = try LogState(root: testCase.data, sequence: 1, timestamp: testCase.now - 1, rules: rulesRevision,
                                 compiler: RulesPolicy.offlineCompiler)
        let entry = LogEntry(sequence: 2, timestamp: testCase.now,
                             operation: .write(testCase.write, caller: .user(auth: testCase.auth), rulesVersion: 1))
        switch state.apply(entry) {
        case .applied: return .allowed
        case .rejected(.denied): return .denied
        case .rejected: return .invalid
        case .rulesInstalled, .presenceChanged: return .invalid
        }
    }

    /// The onDisconnect pre-check's decision, against the same tree and time (a push is registered as the set of
    /// its child: onDisconnect has no push).
    static func preCheckDecision(_ testCase: Case) throws -> Outcome {
        let snapshot = StoreSnapshot(root: testCase.data, sequence: 1, now: testCase.now, rules: rulesRevision,
                                     policy: RulesPolicy.offlineCompiler(Array(rulesSource.utf8)), isAvailable: true)
        let gate = RulesGate(identity: .override(testCase.auth), caller: "test")
        var write = testCase.write
        if case .push(let parent, let value) = write { write = .set(.node(parent.child(pushed)), value, expectedHash: nil) }
        switch gate.registration(of: write, in: snapshot) {
        case .allowed: return .allowed
        case .denied: return .denied
        case .invalid: return .invalid
        }
    }

    /// The simulator's decision on the same write, as a rules test case.
    static func simulatorDecision(_ testCase: Case) throws -> Outcome {
        let path: Path
        let operation: RulesTestCase.Operation
        switch testCase.write {
        case .set(.node(let target), let value, _): (path, operation) = (target, .set(value))
        case .set(.priority(of: let target), let value, _): (path, operation) = (target, .setPriority(value))
        case .push(let parent, let value): (path, operation) = (parent.child(pushed), .set(value))
        case .update(let base, let entries): (path, operation) = (base, .update(entries))
        }
        let rules = try RuleSet(source: Array(rulesSource.utf8), fileName: "agreement.rules.json")
        let result = RulesPolicy(rules: rules).run(RulesTestCase(
            name: "agreement", path: path, operation: operation, auth: testCase.auth, data: testCase.data,
            now: testCase.now, expectAllowed: true))
        if result.setupError != nil { return .invalid }
        return result.decision.allowed ? .allowed : .denied
    }

    /// The name the pre-check and the simulator give a push's child (rules see only `$id`).
    static let pushed = Key(trusted: "pushed")
}
