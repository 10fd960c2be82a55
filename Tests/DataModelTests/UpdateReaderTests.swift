import Testing

@testable import DataModel

@Suite("JSONReader.readUpdate")
struct UpdateReaderTests {
    private func update(_ text: String, depth: Int = 0) throws(JSONError) -> [UpdateEntry] {
        try JSONReader.readUpdate(Array(text.utf8), depth: depth)
    }

    @Test("reads relative paths, priority targets and values in input order")
    func entries() throws {
        let entries = try update(#"{"members/carol":{"name":"C"},"count":{".sv":{"increment":1}},"a/.priority":5,"gone":null}"#)
        #expect(entries.map(\.target) == [
            .node(try Path("members/carol")), .node(try Path("count")), .priority(of: try Path("a")), .node(try Path("gone")),
        ])
        #expect(export(entries[0].value.node) == #"{"name":"C"}"#)
        #expect(entries[1].value.serverValues == [ServerValuePlaceholder(path: .root, isPriority: false, value: .increment(1))])
        #expect(entries[2].value.node == Node(.number(5)))
        #expect(entries[3].value.node.isEmpty)
        #expect(try update("{}").isEmpty)
    }

    @Test("rejects overlapping paths, naming both", arguments: [
        (#"{"a":1,"a/b":2}"#, "a", "a/b"),
        (#"{"a/b/c":1,"a/b":2}"#, "a/b/c", "a/b"),
        (#"{"a":1,"a/.priority":2}"#, "a", "a/.priority"),
        (#"{"a":1,"/a/":2}"#, "a", "/a/"),
        (#"{"":1,"x":2}"#, "", "x"),
    ])
    func overlaps(text: String, first: String, second: String) {
        #expect(throws: JSONError.self) { try update(text) }
        do {
            _ = try update(text)
        } catch {
            #expect(error.reason == .invalidData(.overlappingUpdatePaths(first, second)))
        }
    }

    @Test("siblings and priorities of different paths do not overlap")
    func disjoint() throws {
        #expect(try update(#"{"a/b":1,"a/c":2,"ab":3,"x/.priority":4,"a/d/.priority":5}"#).count == 5)
    }

    @Test("rejects bad paths at the member's key, bad priorities and data too deep for its path at its value")
    func invalid() throws {
        #expect(throws: JSONError(offset: 1, reason: .invalidData(.invalidKey(.invalidKey("b$"))))) {
            try update(#"{"a/b$":1}"#)
        }
        #expect(throws: JSONError(offset: 15, reason: .invalidData(.invalidPriority))) {
            try update(#"{"a/.priority":true}"#)
        }
        #expect(throws: JSONError(offset: 9, reason: .invalidData(.tooDeep(depth: 33)))) {
            try update(#"{"a/b/c":{"d":1}}"#, depth: 30)
        }
        #expect(throws: JSONError(offset: 12, reason: .invalidData(.invalidKey(.invalidKey("$x"))))) {
            try update(#"{"a":1,"b":{"$x":1}}"#)
        }
    }
}
