import Testing

@testable import DataModel

@Suite("Key")
struct KeyTests {
    @Test("sorts the spec's example in JS key order (data-model.md §7.1)")
    func specExampleOrder() throws {
        let input = ["b", "10", "a", "2", "-1", "007", "7", "2147483648", "-2147483648", "0", "-0", "A", "_x", "-abc"]
        let sorted = try input.map { try Key($0) }.sorted().map(\.string)
        #expect(sorted == ["-2147483648", "-1", "0", "-0", "2", "7", "007", "10", "-abc", "2147483648", "A", "_x", "a", "b"])
    }

    @Test("integer-like keys follow the JS rule", arguments: [
        ("0", Int32?.some(0)), ("-0", 0), ("007", 7), ("00000000000000000000001", 1), ("2147483647", Int32.max),
        ("-2147483648", Int32.min), ("2147483648", nil), ("-2147483649", nil), ("12345678901", nil), ("+1", nil),
        ("1 ", nil), ("", nil), ("-", nil), ("1a", nil), ("-O-2j67-", nil),
    ])
    func integerKeys(text: String, expected: Int32?) {
        #expect(Key(unchecked: text).integerValue == expected)
    }

    @Test("orders by UTF-16 code units, so U+FFFF sorts after an emoji")
    func utf16Order() throws {
        let emoji = try Key("😀")  // U+1F600, surrogates D83D DE00
        let high = try Key("\u{FFFF}")
        let privateUse = try Key("\u{E000}")
        let hangul = try Key("\u{D7FF}")
        #expect(emoji < high)
        #expect(emoji < privateUse)
        #expect(hangul < emoji)
        #expect(!(high < emoji))
    }

    @Test("keeps canonically equivalent strings apart")
    func canonicalEquivalence() throws {
        let precomposed = try Key("\u{E9}")
        let decomposed = try Key("e\u{301}")
        #expect(precomposed != decomposed)
        #expect(Set([precomposed, decomposed]).count == 2)
        #expect(decomposed < precomposed)  // 'e' (0x65) < U+00E9
    }

    @Test("rejects forbidden characters and names the key", arguments: [".", "#", "$", "[", "]", "/", "\u{0}", "\u{1F}", "\u{7F}"])
    func forbidden(character: String) {
        let text = "a\(character)b"
        #expect(throws: PathError.invalidKey(text)) { try Key(text) }
    }

    @Test("accepts other punctuation, spaces and non-ASCII")
    func accepted() throws {
        for text in ["a b", "-", "_", "!*'()", "é", "😀", "\u{80}", "\u{2028}"] {
            #expect(try Key(text).string == text)
        }
    }

    @Test("rejects the empty key and keys over 768 UTF-8 bytes")
    func lengths() throws {
        #expect(throws: PathError.emptyKey) { try Key("") }
        #expect(try Key(String(repeating: "a", count: 768)).utf8Count == 768)
        let long = String(repeating: "é", count: 385)  // 770 bytes
        #expect(throws: PathError.keyTooLong(long, byteCount: 770)) { try Key(long) }
        #expect(throws: PathError.keyTooLong("abc", byteCount: 3)) { try Key("abc", limits: DataLimits(maxKeyBytes: 2)) }
    }

    @Test("equal integer values order by length, then by code units")
    func integerTies() throws {
        #expect(try Key("7") < Key("007"))
        #expect(try Key("0") < Key("-0"))
        #expect(try Key("-0") < Key("00"))  // same value and length: '-' (0x2D) < '0'
    }

    @Test("keys sharing eight bytes or more order and compare by the first differing code unit")
    func longCommonPrefixes() throws {
        let ordered = [
            "aaaaaaaa", "aaaaaaaaa", "aaaaaaaab", "aaaaaaaabbbbbbbb", "aaaaaaaabbbbbbbbc", "aaaaaaaabbbbbbbbd",
            "aaaaaaaa😀", "aaaaaaaa\u{FFFF}",
        ]
        let keys = try ordered.map { try Key($0) }
        #expect(keys.reversed().sorted() == keys)
        #expect(try Key("aaaaaaaabbbbbbbbc") != Key("aaaaaaaabbbbbbbbd"))
        #expect(try Key("aaaaaaaabbbbbbbbc") == Key(String("aaaaaaaabbbbbbbbcx".dropLast())))
    }
}

@Suite("Path")
struct PathTests {
    @Test("normalizes slashes", arguments: ["/a/b", "a/b", "/a//b/", "//a/b//"])
    func normalization(text: String) throws {
        let path = try Path(text)
        #expect(path.description == "/a/b")
        #expect(path.depth == 2)
    }

    @Test("the empty string and a slash are the root")
    func root() throws {
        #expect(try Path("") == .root)
        #expect(try Path("/") == .root)
        #expect(Path.root.description == "/")
        #expect(Path.root.parent == nil)
    }

    @Test("rejects a bad segment, naming it")
    func badSegment() {
        #expect(throws: PathError.invalidKey("b.c")) { try Path("/a/b.c/d") }
        #expect(throws: PathError.invalidKey(".priority")) { try Path("/a/.priority") }
    }

    @Test("allows 32 segments and rejects 33")
    func depth() throws {
        let ok = (1...32).map { "k\($0)" }.joined(separator: "/")
        #expect(try Path(ok).depth == 32)
        #expect(throws: PathError.tooDeep(depth: 33)) { try Path(ok + "/x") }
    }

    @Test("relations: contains, relative path, parent, child")
    func relations() throws {
        let a = try Path("/a")
        let abc = try Path("/a/b/c")
        #expect(a.contains(abc))
        #expect(!abc.contains(a))
        #expect(a.contains(a))
        #expect(a.relativePath(to: abc) == (try Path("b/c")))
        #expect(abc.relativePath(to: a) == nil)
        #expect(abc.parent == (try Path("/a/b")))
        #expect(a.child(try Key("z")).description == "/a/z")
        #expect(try Path("/ab").contains(try Path("/a")) == false)
    }

    @Test("orders like pathCompare: key order per segment, then shorter first")
    func ordering() throws {
        let paths = try ["/b", "/a/b", "/10", "/2/x", "/a", "/2"].map { try Path($0) }.sorted().map(\.description)
        #expect(paths == ["/2", "/2/x", "/10", "/a", "/a/b", "/b"])
    }

    @Test("a write target may end in .priority")
    func writeTargets() throws {
        #expect(try WriteTarget(parsing: "/a/b/.priority") == .priority(of: try Path("/a/b")))
        #expect(try WriteTarget(parsing: ".priority") == .priority(of: .root))
        #expect(try WriteTarget(parsing: "/a/b/") == .node(try Path("/a/b")))
        #expect(throws: PathError.invalidKey(".priority")) { try WriteTarget(parsing: "/a/.priority/b") }
        #expect(throws: PathError.invalidKey("x.priority")) { try WriteTarget(parsing: "/a/x.priority") }
    }
}
