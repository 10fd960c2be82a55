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
        #expect(isRecord(try node(#"{"a":{"b":1}}"#)))  // a small sub-object is packed inside
        #expect(!isRecord(try node(#"{"a":{"b":{"c":1,".priority":2}}}"#)))
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

    @Test("nested records read, export, hash and compare like the general form")
    func nestedRecords() throws {
        let text = #"{"age":3,"name":"User number 123456","tags":{"0":"x","1":"y"},"z":{"deep":{"k":true}}}"#
        let record = try node(text)
        #expect(isRecord(record))
        var general = Node.empty
        for entry in record.children {
            var child = Node.empty
            for grandchild in entry.node.children { child.setChild(grandchild.key, to: grandchild.node) }
            general.setChild(entry.key, to: entry.node.hasChildren ? child : entry.node)
        }
        #expect(!isRecord(general))
        #expect(record == general)
        #expect(general == record)
        #expect(export(record) == export(general))
        var plainRecord = JSONWriter()
        plainRecord.writePlain(record)
        var plainGeneral = JSONWriter()
        plainGeneral.writePlain(general)
        #expect(plainRecord.bytes == plainGeneral.bytes)
        #expect(String(decoding: plainRecord.bytes, as: UTF8.self).contains(#""tags":["x","y"]"#))
        #expect(sdkHash(record) == sdkHash(general))
        #expect(record.depth == 3)
        #expect(record.descendant(at: try Path("z/deep/k")) == Node(.bool(true)))
        #expect(record.child(try key("tags")).childCount == 2)
        var written = record
        written.set(Node(.string("w")), at: try Path("tags/2"))
        #expect(export(written) == #"{"age":3,"name":"User number 123456","tags":{"0":"x","1":"y","2":"w"},"z":{"deep":{"k":true}}}"#)
        #expect(export(record) == export(try node(text)))
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
