import TestSupport
import DataModel
import Store
import Testing

/// Random write sequences applied to the store and to ``ReferenceTree``; after every write the whole trees must
/// be equal.
@Suite("Store against the reference model")
struct StoreModelTests {
    static let keys = ["a", "b", "c", "1", "10"]

    struct Generator {
        var random: SplitMix64

        mutating func chance(_ percent: Int) -> Bool {
            Int.random(in: 0..<100, using: &random) < percent
        }

        mutating func key() -> String {
            StoreModelTests.keys.randomElement(using: &random) ?? "a"
        }

        mutating func path(maxDepth: Int) -> [String] {
            (0..<Int.random(in: 0...maxDepth, using: &random)).map { _ in key() }
        }

        mutating func priorityJSON() -> String {
            chance(50) ? String(Int.random(in: -3...3, using: &random)) : "\"p\(Int.random(in: 0...3, using: &random))\""
        }

        /// JSON for a value written at absolute depth `depth`.
        mutating func valueJSON(depth: Int, levels: Int) -> String {
            let roll = Int.random(in: 0..<100, using: &random)
            let withPriority = depth >= 1 && chance(20)
            if roll < 8 { return "null" }
            if roll < 13 { return #"{".sv":{"increment":2}}"# }
            if roll < 16 { return #"{".sv":"timestamp"}"# }
            if roll < 55 || levels == 0 {
                let leaf: String
                switch Int.random(in: 0..<3, using: &random) {
                case 0: leaf = String(Int.random(in: -5...5, using: &random))
                case 1: leaf = "\"s\(Int.random(in: 0...3, using: &random))\""
                default: leaf = chance(50) ? "true" : "false"
                }
                return withPriority ? #"{".value":\#(leaf),".priority":\#(priorityJSON())}"# : leaf
            }
            var members: [String] = []
            var used = Set<String>()
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let name = key()
                guard used.insert(name).inserted else { continue }
                members.append("\"\(name)\":" + valueJSON(depth: depth + 1, levels: levels - 1))
            }
            if withPriority { members.append(#"".priority":\#(priorityJSON())"#) }
            return "{" + members.joined(separator: ",") + "}"
        }

        mutating func write(current: (Path) -> Node) throws -> StoreWrite {
            let roll = Int.random(in: 0..<100, using: &random)
            let keys = path(maxDepth: 4)
            let text = "/" + keys.joined(separator: "/")
            let location = try Fixture.path(text)
            if roll < 40 {
                return try Fixture.set(text, valueJSON(depth: keys.count, levels: 3))
            } else if roll < 60 {
                var entries: [(String, String)] = []
                var used = Set<String>()
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let first = key()
                    guard used.insert(first).inserted else { continue }
                    let relative = ([first] + path(maxDepth: 2)).joined(separator: "/")
                    let depth = keys.count + relative.split(separator: "/").count
                    entries.append((relative, valueJSON(depth: depth, levels: 2)))
                }
                return try Fixture.update(text, entries)
            } else if roll < 72 {
                return .remove(location)
            } else if roll < 82 && keys.count >= 2 {
                return try Fixture.set(text + "/.priority", chance(20) ? "null" : priorityJSON())
            } else {
                let expected = chance(60) ? Store.hash(of: current(location)) : Store.hash(of: try Fixture.node("12345"))
                return .set(.node(location), try Fixture.value(valueJSON(depth: keys.count, levels: 2), at: location),
                            expectedHash: expected)
            }
        }
    }

    @Test("random writes leave the same tree as the reference",
          arguments: [UInt64(1), 2, 3, 4, 5, 6])
    func randomWrites(seed: UInt64) async throws {
        let store = try Fixture.memoryStore()
        var reference = ReferenceTree()
        var generator = Generator(random: SplitMix64(seed: seed &* 7919))
        for step in 0..<300 {
            let snapshot = reference.root
            let write = try generator.write { snapshot.descendant(at: $0) }
            let applied = reference.apply(write, timestamp: Fixture.fixedTimestamp)
            let result = await store.apply(write)
            switch result {
            case .success: #expect(applied, "step \(step): the store applied a write the reference rejected")
            case .failure(let error): #expect(!applied, "step \(step): the store rejected a write: \(error)")
            }
            let tree = await store.tree
            #expect(tree == reference.root, "step \(step) diverged after \(write)")
            if tree != reference.root { return }
        }
    }
}
