import DataModel
import Dispatch
import Foundation
import Rules

// Cost of security-rules evaluation per operation with the chat application's rules
// (Tests/RulesTests/Fixtures/Rules/chat.rules.json) over 200 rooms x 100 messages, in a release build:
//   swift run -c release RulesBench [ITERATIONS]
// Prints nanoseconds per operation, the median of 5 rounds, in wall-clock time and in this thread's CPU time (the
// machine is shared: CPU time leaves out the time the neighbours had the core).

let iterations = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 200_000
let rulesPath = "Tests/RulesTests/Fixtures/Rules/chat.rules.json"
let rules: RuleSet
do {
    rules = try RuleSet.load(contentsOf: rulesPath)
} catch {
    print("cannot load \(rulesPath) (run from the repository root): \(error)")
    exit(1)
}

func key(_ text: String) -> Key { Key(trusted: text) }
func leaf(_ text: String) -> Node { Node(.string(text)) }
func object(_ members: [(String, Node)]) -> Node { Node(children: members.map { ChildEntry(key: key($0.0), node: $0.1) }) }

let now = 1_700_000_000_000.0
var rooms: [(String, Node)] = []
for room in 0..<200 {
    var messages: [(String, Node)] = []
    for message in 0..<100 {
        messages.append(("m\(message)", object([
            ("author", leaf("bob")), ("text", leaf("message \(message)")), ("timestamp", Node(.number(now - 1000))),
        ])))
    }
    rooms.append(("r\(room)", object([
        ("info", object([("title", leaf("Room \(room)")), ("createdBy", leaf("alice"))])),
        ("members", object([("alice", leaf("owner")), ("bob", leaf("member"))])),
        ("messages", object(messages)),
    ])))
}
let root = object([("rooms", object(rooms)), ("users", object([("alice", object([("name", leaf("Alice"))]))]))])
let auth = JSONValue.object([("uid", .string("alice")), ("provider", .string("password"))])
let context = RulesContext(auth: auth, root: root, now: now)
let postPath = Path(keys: [key("rooms"), key("r7"), key("messages"), key("new")])
let post = object([("author", leaf("alice")), ("text", leaf("hello")), ("timestamp", Node(.number(now)))])
let afterPost = root.setting(post, at: postPath)
let roomPath = Path(keys: [key("rooms"), key("r7")])

/// CPU time of this thread in nanoseconds.
func cpuNanoseconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) * 1e9 + Double(spec.tv_nsec)
}

func measure(_ name: String, _ body: () -> Bool) {
    var rounds: [Double] = []
    var cpuRounds: [Double] = []
    for _ in 0..<5 {
        var allowed = 0
        let start = DispatchTime.now().uptimeNanoseconds
        let cpuStart = cpuNanoseconds()
        for _ in 0..<iterations where body() { allowed += 1 }
        let cpuElapsed = cpuNanoseconds() - cpuStart
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start)
        precondition(allowed == iterations, "\(name) was denied")
        rounds.append(elapsed / Double(iterations))
        cpuRounds.append(cpuElapsed / Double(iterations))
    }
    rounds.sort()
    cpuRounds.sort()
    print("\(name): \(Int(rounds[2])) ns per operation, \(Int(cpuRounds[2])) ns CPU (median of 5 rounds of \(iterations))")
}

measure("post a message (1 .write, 6 .validate)") {
    rules.authorizeWrite(at: postPath, context: context, newRoot: afterPost).allowed
}
measure("read a room") {
    rules.authorizeRead(at: roomPath, query: nil, context: context).allowed
}
