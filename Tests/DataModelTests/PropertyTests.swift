import TestSupport
import PropertyBased
import Testing

@testable import DataModel

/// Random scenarios built from one seed: locations with a small value domain (so ties are frequent), random
/// queries, and random write sequences.
struct Scenario {
    var random: SplitMix64

    static let keyPool = ["0", "1", "2", "10", "-1", "007", "7", "a", "b", "c", "aa", "z", "é", "e\u{301}", "😀", "\u{FFFF}"]
    static let stringPool = ["", "a", "b", "10", "é", "e\u{301}", "😀", "\u{FFFF}"]
    static let numberPool: [Double] = [-1, 0, 1, 2.5, 3, 1e21]

    mutating func leaf() -> Node {
        switch Int.random(in: 0..<3, using: &random) {
        case 0: return Node(.bool(random.chance(0.5)))
        case 1: return Node(.number(random.pick(Self.numberPool)))
        default: return Node(.string(random.pick(Self.stringPool)))
        }
    }

    mutating func priority() -> Priority? {
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return .number(random.pick(Self.numberPool))
        case 1: return .string(random.pick(Self.stringPool))
        default: return nil
        }
    }

    /// A child value: a leaf, or an object with `s` (a leaf or an object with `t`), maybe with a priority.
    mutating func child() -> Node {
        var value: Node
        switch Int.random(in: 0..<4, using: &random) {
        case 0, 1:
            value = leaf()
        case 2:
            value = Node(children: [ChildEntry(key: Key(unchecked: "s"), node: leaf())])
        default:
            let inner = Node(children: [ChildEntry(key: Key(unchecked: "t"), node: leaf())])
            value = Node(children: [
                ChildEntry(key: Key(unchecked: "s"), node: inner),
                ChildEntry(key: Key(unchecked: "x"), node: leaf()),
            ])
        }
        return value.withPriority(priority())
    }

    mutating func location() -> Node {
        var node = Node.empty
        for _ in 0..<Int.random(in: 0...Self.keyPool.count, using: &random) {
            node.setChild(Key(unchecked: random.pick(Self.keyPool)), to: child())
        }
        return node
    }

    mutating func sortValue(for index: QueryIndex) -> SortValue {
        switch index {
        case .key:
            return .null
        case .priority:
            return SortValue(priority())
        case .value, .child:
            switch Int.random(in: 0..<5, using: &random) {
            case 0: return .null
            case 1: return .bool(random.chance(0.5))
            case 2: return .number(random.pick(Self.numberPool))
            default: return .string(random.pick(Self.stringPool))
            }
        }
    }

    mutating func bound(for index: QueryIndex, defaultName: BoundName) -> QueryBound? {
        guard random.chance(0.5) else { return nil }
        let names: [BoundName] = [.min, .max, defaultName] + Self.keyPool.map { .key(Key(unchecked: $0)) }
        if index == .key {
            return QueryBound(value: .null, name: .key(Key(unchecked: random.pick(Self.keyPool + ["", "b5"]))), inclusive: random.chance(0.5))
        }
        return QueryBound(value: sortValue(for: index), name: random.pick(names), inclusive: random.chance(0.5))
    }

    mutating func query() -> QueryParams {
        let index = random.pick([QueryIndex.priority, .key, .value, .child(Path(keys: [Key(unchecked: "s")])),
            .child(Path(keys: [Key(unchecked: "s"), Key(unchecked: "t")]))])
        let limit: Int? = random.chance(0.6) ? Int.random(in: 1...5, using: &random) : nil
        return QueryParams(
            index: index, start: bound(for: index, defaultName: .min), end: bound(for: index, defaultName: .max),
            limit: limit, anchor: random.chance(0.5) ? .first : .last)
    }

    /// A write to the location: one child set/removed/modified, or occasionally several at once.
    mutating func write(to location: Node) -> Node {
        var result = location
        let writes = random.chance(0.15) ? Int.random(in: 2...5, using: &random) : 1
        for _ in 0..<writes {
            let key = Key(unchecked: random.pick(Self.keyPool))
            switch Int.random(in: 0..<5, using: &random) {
            case 0: result.setChild(key, to: .empty)
            case 1: result.set(leaf(), at: Path(keys: [key, Key(unchecked: "s")]))
            case 2: result.modifyChild(key) { $0.setPriority(priority()) }
            default: result.setChild(key, to: child())
            }
        }
        return result
    }
}

@Suite("Properties")
struct PropertyTests {
    @Test("key order equals the integer-then-UTF-16 reference")
    func keyOrderMatchesReference() async {
        let characters = ["0", "1", "9", "-", "a", "B", "_", "é", "e\u{301}", "\u{FFFF}", "😀", "\u{E000}", "\u{D7FF}"]
        let text = Gen.int(in: 0...(characters.count - 1)).array(of: 1...4).map { $0.map { characters[$0] }.joined() }
        await propertyCheck(count: 500, input: text, text) { left, right in
            func integer(_ text: String) -> Int64? {
                let digits = text.hasPrefix("-") ? String(text.dropFirst()) : text
                guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
                let significant = digits.drop { $0 == "0" }
                guard significant.count <= 10 else { return nil }
                let magnitude = Int64(significant.isEmpty ? "0" : String(significant)) ?? 0
                let value = text.hasPrefix("-") ? -magnitude : magnitude
                return value >= Int64(Int32.min) && value <= Int64(Int32.max) ? value : nil
            }
            func referenceLess(_ a: String, _ b: String) -> Bool {
                switch (integer(a), integer(b)) {
                case (let x?, let y?):
                    if x != y { return x < y }
                    if a.utf8.count != b.utf8.count { return a.utf8.count < b.utf8.count }
                    return Array(a.utf16).lexicographicallyPrecedes(Array(b.utf16))
                case (.some, .none): return true
                case (.none, .some): return false
                case (.none, .none): return Array(a.utf16).lexicographicallyPrecedes(Array(b.utf16))
                }
            }
            #expect((Key(unchecked: left) < Key(unchecked: right)) == referenceLess(left, right))
            #expect((Key(unchecked: left) == Key(unchecked: right)) == (Array(left.utf8) == Array(right.utf8)))
        }
    }

    @Test("the B+-tree behaves like a sorted array under random inserts and removes")
    func sortedTreeMatchesArray() async {
        await propertyCheck(count: 40, input: Gen.int(in: 0...Int.max)) { seed in
            var random = SplitMix64(seed: UInt64(bitPattern: Int64(seed)))
            var tree = SortedTree<IndexEntry>()
            var reference: [IndexEntry] = []
            var snapshots: [(SortedTree<IndexEntry>, [IndexEntry])] = []
            let range = Int.random(in: 10...3000, using: &random)
            for step in 0..<4000 {
                let entry = IndexEntry(sortValue: .number(Double(Int.random(in: 0..<range, using: &random) % 50)),
                    key: Key(unchecked: String(Int.random(in: 0..<range, using: &random))))
                let (position, found) = QueryWindow.search(reference, entry)
                if random.chance(0.45) {
                    let removed = tree.remove(entry)
                    #expect((removed != nil) == found)
                    if found { reference.remove(at: position) }
                } else {
                    let replaced = tree.upsert(entry)
                    #expect((replaced != nil) == found)
                    if !found { reference.insert(entry, at: position) }
                }
                if step % 500 == 0 { snapshots.append((tree, reference)) }
            }
            #expect(tree.count == reference.count)
            #expect(Array(tree) == reference)
            for (snapshot, expected) in snapshots { #expect(Array(snapshot) == expected) }
            for _ in 0..<50 where !reference.isEmpty {
                let rank = Int.random(in: 0..<reference.count, using: &random)
                #expect(tree.element(atRank: rank) == reference[rank])
                #expect(tree.rank(of: reference[rank]) == (rank, true))
                #expect(Array(tree.elements(fromRank: rank).prefix(3)) == Array(reference[rank...].prefix(3)))
            }
            let rebuilt = SortedTree<IndexEntry>(sorted: reference)
            #expect(Array(rebuilt) == reference)
        }
    }

    @Test("query windows over an index select what the reference algorithm selects")
    func windowsMatchReferenceSelection() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var scenario = Scenario(random: SplitMix64(seed: UInt64(bitPattern: Int64(seed))))
            let location = scenario.location()
            let query = scenario.query()
            let index = ChildIndex(index: query.index, over: location)
            let window = QueryWindow(query: query, index: index)
            let expected = query.select(from: location).map(\.key)
            #expect(window.selectedKeys(index: index) == expected, "query \(query) over \(location)")
            #expect(window.result(from: location, index: index) == query.result(from: location) || query.loadsAllData)
        }
    }

    @Test("incremental window events equal the reference events over random write sequences")
    func incrementalEventsMatchReference() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...Int.max)) { seed in
            var scenario = Scenario(random: SplitMix64(seed: UInt64(bitPattern: Int64(seed))))
            var location = scenario.location()
            let query = scenario.query()
            var index = ChildIndex(index: query.index, over: location)
            var window = QueryWindow(query: query, index: index)
            for _ in 0..<40 {
                let next = scenario.write(to: location)
                let changes = Node.childChanges(from: location, to: next)
                for change in changes { index.update(key: change.key, from: change.old, to: change.new) }
                let events = window.apply(changes, index: index, node: next)
                let expected = query.events(from: location, to: next)
                #expect(events == expected, "query \(query): \(location) → \(next)")
                #expect(window.selectedKeys(index: index) == query.select(from: next).map(\.key))
                location = next
            }
        }
    }

    @Test("child diffs list exactly the children that differ, in key order")
    func childChangesMatchReference() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var scenario = Scenario(random: SplitMix64(seed: UInt64(bitPattern: Int64(seed))))
            let before = scenario.location()
            let after = scenario.random.chance(0.3) ? scenario.location() : scenario.write(to: before)
            let changes = Node.childChanges(from: before, to: after)
            let keys = Set(before.children.map(\.key)).union(after.children.map(\.key))
            let expected = keys.sorted().compactMap { key -> ChildChange? in
                let (old, new) = (before.child(key), after.child(key))
                return old == new ? nil : ChildChange(key: key, old: old, new: new)
            }
            #expect(changes == expected)
            var rebuilt = before
            for change in changes { rebuilt.setChild(change.key, to: change.new) }
            #expect(rebuilt == after.withPriority(before.priority) || rebuilt.isEmpty == after.isEmpty)
        }
    }

    @Test("export JSON round-trips random trees; the hash is stable under re-parsing")
    func exportRoundTrip() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var scenario = Scenario(random: SplitMix64(seed: UInt64(bitPattern: Int64(seed))))
            let tree = scenario.location().withPriority(scenario.priority())
            let bytes = tree.exportJSON
            let parsed = try? JSONReader.readData(bytes).node
            #expect(parsed == tree)
            if let parsed { #expect(sdkHash(parsed) == sdkHash(tree)) }
        }
    }
}
