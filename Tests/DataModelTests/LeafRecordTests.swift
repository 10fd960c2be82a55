import Testing

@testable import DataModel

@Suite("LeafRecord")
struct LeafRecordTests {
    private func isRecord(_ node: Node) -> Bool {
        if case .record = node.withoutPriority.storage { return true }
        return false
    }

    @Test("objects of plain leaves are packed; others keep the general form")
    func eligibility() throws {
        #expect(isRecord(try node(#"{"text":"a \"quoted\" é 😀 line\n","n":-2.5e-7,"t":true,"f":false,"10":"x","2":""}"#)))
        #expect(!isRecord(try node(#"{"a":{"b":1}}"#)))
        #expect(!isRecord(try node(#"{"a":{".value":1,".priority":2}}"#)))
        #expect(isRecord(try node(#"{"a":1,".priority":2}"#)))  // the object's own priority lives outside
        let many = "{" + (0..<17).map { #""k\#($0)":1"# }.joined(separator: ",") + "}"
        #expect(!isRecord(try node(many)))
        let longKey = String(repeating: "k", count: 256)
        #expect(!isRecord(try node(#"{"\#(longKey)":1}"#)))
        let longString = String(repeating: "s", count: 3000)
        #expect(!isRecord(try node(#"{"a":"\#(longString)"}"#)))
    }

    @Test("reads, iteration and export match the general form")
    func behavesLikeAnObject() throws {
        let text = #"{"2":"","10":"x","f":false,"n":-2.5e-7,"t":true,"text":"a \"q\" é 😀\n"}"#
        let record = try node(text)
        #expect(isRecord(record))
        var general = Node.empty
        for entry in record.children { general.setChild(entry.key, to: entry.node) }
        general.setChild(try key("zz"), to: Node(.number(1)))
        general.setChild(try key("zz"), to: .empty)
        #expect(!isRecord(general))
        #expect(record == general)
        #expect(general == record)
        #expect(export(record) == export(general))
        #expect(record.child(try key("n")) == Node(.number(-2.5e-7)))
        #expect(record.child(try key("missing")).isEmpty)
        #expect(record.descendant(at: try Path("text")) == Node(.string("a \"q\" é 😀\n")))
        #expect(record.childCount == 6)
        #expect(record.depth == 1)
        #expect(Array(record.children.map(\.key.string)) == ["2", "10", "f", "n", "t", "text"])
        #expect(record.rank(ofChild: try key("f")) == (2, true))
        #expect(sdkHash(record) == sdkHash(general))
    }

    @Test("writing into a record converts it and leaves snapshots alone")
    func writes() throws {
        var value = try node(#"{"a":1,"b":"x"}"#)
        let snapshot = value
        value.set(Node(.number(2)), at: try Path("a"))
        value.set(Node(.bool(true)), at: try Path("c/d"))
        #expect(export(value) == #"{"a":2,"b":"x","c":{"d":true}}"#)
        #expect(export(snapshot) == #"{"a":1,"b":"x"}"#)
        var emptied = snapshot
        emptied.setChild(try key("a"), to: .empty)
        emptied.setChild(try key("b"), to: .empty)
        #expect(emptied.isEmpty)
    }
}
