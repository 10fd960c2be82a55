import Testing

@testable import DataModel

/// Child lookups in every storage form: packed records (up to 16 leaves), flat maps (up to 64 children) and trees.
@Suite("Child lookups")
struct NodeLookupTests {
    /// Names that take every comparison path: integer-like keys, keys starting with `-`, long shared prefixes (push
    /// ids), and non-ASCII keys ordered by UTF-16 code units.
    static let specialNames = [
        "0", "1", "2", "10", "-1", "-10", "007", "2147483648", "-", "-abc", "a", "ab", "abcdefgh", "abcdefghi",
        "abcdefgh1", "abcdefghij", "-NfQ3aaaaaaaaaaaaaaa", "-NfQ3aaaaaaaaaaaaaab", "é", "e\u{301}", "\u{FFFF}", "😀", "z",
    ]

    /// `count` distinct names: the special ones first, then generated ones.
    static func names(_ count: Int) -> [String] {
        Array((specialNames + (0..<count).map { "k\($0)" }).prefix(count))
    }

    /// An object whose children are named `names`, each holding its own name.
    static func object(_ names: [String]) -> Node {
        Node(children: names.map { ChildEntry(key: Key(trusted: $0), node: Node(.string($0))) })
    }

    /// Names that are not children of `object(names(_:))` for any count used here.
    static let absentNames = ["absent", "k-1", "3000000000", "abcdefgh2", "-NfQ3aaaaaaaaaaaaaac", "e", "00"]

    @Test("finds every child and nothing else, and ranks children in key order", arguments: [5, 23, 64, 65, 300, 5000])
    func lookups(count: Int) throws {
        let names = Self.names(count)
        let object = Self.object(names)
        for name in names {
            let key = Key(trusted: name)
            #expect(object.child(key) == Node(.string(name)))
            #expect(object.hasChild(key))
        }
        for name in Self.absentNames {
            #expect(object.child(Key(trusted: name)).isEmpty)
            #expect(!object.hasChild(Key(trusted: name)))
        }
        let sorted = names.map { Key(trusted: $0) }.sorted()
        #expect(object.children.map(\.key) == sorted)
        for (rank, key) in sorted.enumerated() {
            #expect(object.rank(ofChild: key) == (rank, true))
        }
    }

    @Test("hasChild looks through a priority and is false for leaves and the empty node")
    func hasChildForms() throws {
        let (x, y, z) = (try key("x"), try key("y"), try key("z"))
        let prioritized = try node(#"{"a":{"x":1,"y":{"z":true},".priority":3}}"#).child(try key("a"))
        #expect(prioritized.priority != nil)
        #expect(prioritized.hasChild(x) && prioritized.hasChild(y))
        #expect(!prioritized.hasChild(z))
        #expect(!Node(.string("x")).hasChild(x))
        #expect(!Node.empty.hasChild(x))
    }

    @Test("looks a key up in two versions of a node exactly as in each alone", arguments: [5, 64, 300])
    func alongside(count: Int) throws {
        let names = Self.names(count)
        let original = Self.object(names)
        var changed = original
        changed.setChild(Key(trusted: names[count / 2]), to: Node(.number(1)))
        var inserted = original
        inserted.setChild(Key(trusted: "k-new"), to: Node(.bool(true)))
        var insertedFirst = original
        insertedFirst.setChild(Key(trusted: "!"), to: Node(.bool(true)))
        var removed = original
        removed.setChild(Key(trusted: names[0]), to: .empty)
        var grown = original
        for index in 0..<100 { grown.setChild(Key(trusted: "g\(index)"), to: Node(.number(Double(index)))) }
        var shrunk = original
        for name in names.prefix(count / 2) { shrunk.setChild(Key(trusted: name), to: .empty) }
        let versions = [
            original, changed, inserted, insertedFirst, removed, grown, shrunk, original.withPriority(.number(1)),
            Node(.bool(true)), .empty,
        ]
        let probes = (names + Self.absentNames + ["k-new", "!", "g5"]).map { Key(trusted: $0) }
        var mismatches: [String] = []
        for (first, a) in versions.enumerated() {
            for (second, b) in versions.enumerated() {
                for key in probes {
                    let (x, y) = a.child(key, alongside: b)
                    if x != a.child(key) || y != b.child(key) { mismatches.append("\(first)/\(second)/\(key)") }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) wrong lookups (version/version/key), such as \(mismatches.prefix(5))")
    }
}
