import Testing

@testable import DataModel

@Suite("Node")
struct NodeTests {
    @Test("set creates intermediate objects and remove prunes empty parents")
    func setAndRemove() throws {
        var root = Node.empty
        root.set(Node(.number(1)), at: try Path("/a/b/c"))
        #expect(export(root) == #"{"a":{"b":{"c":1}}}"#)
        root.set(Node(.string("x")), at: try Path("/a/d"))
        root.set(.empty, at: try Path("/a/b/c"))
        #expect(export(root) == #"{"a":{"d":"x"}}"#)
        root.set(.empty, at: try Path("/a/d"))
        #expect(root.isEmpty)
    }

    @Test("writing below a leaf turns it into an object that keeps the leaf's priority")
    func leafBecomesObject() throws {
        var root = try node(#"{"a":{".value":5,".priority":7}}"#)
        root.set(Node(.bool(true)), at: try Path("/a/b"))
        #expect(export(root) == #"{"a":{"b":true,".priority":7}}"#)
    }

    @Test("removing below a leaf leaves the leaf alone")
    func removeBelowLeaf() throws {
        var root = try node(#"{"a":5}"#)
        root.set(.empty, at: try Path("/a/b"))
        #expect(export(root) == #"{"a":5}"#)
    }

    @Test("deleting the last child also deletes the object's priority")
    func lastChildDropsPriority() throws {
        var root = try node(#"{"a":{"b":1,".priority":3}}"#)
        root.set(.empty, at: try Path("/a/b"))
        #expect(root.isEmpty)
        root.set(Node(.number(2)), at: try Path("/a/c"))
        #expect(export(root) == #"{"a":{"c":2}}"#)
    }

    @Test("a set replaces the priority; setPriority changes only the priority")
    func priorities() throws {
        var root = try node(#"{"a":{".value":1,".priority":"p"}}"#)
        root.set(Node(.number(2)), at: try Path("/a"))
        #expect(export(root) == #"{"a":2}"#)
        root.modifyDescendant(at: try Path("/a")) { $0.setPriority(.number(9)) }
        #expect(export(root) == #"{"a":{".value":2,".priority":9}}"#)
        root.modifyDescendant(at: try Path("/a")) { $0.setPriority(nil) }
        #expect(export(root) == #"{"a":2}"#)
        root.modifyDescendant(at: try Path("/missing")) { $0.setPriority(.number(1)) }
        #expect(export(root) == #"{"a":2}"#)
        #expect(Node.empty.withPriority(.number(1)).isEmpty)
    }

    @Test("a copy is a snapshot unaffected by later writes")
    func snapshots() throws {
        var root = try node(#"{"a":{"b":1},"c":2}"#)
        let snapshot = root
        root.set(Node(.number(3)), at: try Path("/a/b"))
        root.setChild(try key("c"), to: .empty)
        #expect(export(snapshot) == #"{"a":{"b":1},"c":2}"#)
        #expect(export(root) == #"{"a":{"b":3}}"#)
    }

    @Test("large objects switch to a tree and back, keeping key order", arguments: [10, 65, 200, 5000])
    func largeObjects(count: Int) throws {
        var root = Node.empty
        var reference: [String: Int] = [:]
        var generator = SystemRandomNumberGenerator()
        for step in 0..<(count * 3) {
            let name = "k\(Int.random(in: 0..<count, using: &generator))"
            if step % 3 == 2 {
                root.setChild(try key(name), to: .empty)
                reference[name] = nil
            } else {
                root.setChild(try key(name), to: Node(.number(Double(step))))
                reference[name] = step
            }
            if step % 97 == 0 {
                let snapshot = root  // exercise copy-on-write paths in the tree
                _ = snapshot.childCount
            }
        }
        let expectedKeys = reference.keys.sorted { Key(unchecked: $0) < Key(unchecked: $1) }
        #expect(Array(root.children.map(\.key.string)) == expectedKeys)
        #expect(root.childCount == reference.count)
        for (name, value) in reference {
            #expect(root.child(try key(name)) == Node(.number(Double(value))))
        }
        for (rank, name) in expectedKeys.enumerated() {
            #expect(root.rank(ofChild: try key(name)) == (rank, true))
            #expect(root.child(atRank: rank).key.string == name)
        }
    }

    @Test("equality compares keys and strings by code units and includes priorities")
    func equality() throws {
        #expect(try node(#"{"a":"\u00e9"}"#) != (try node(#"{"a":"e\u0301"}"#)))
        #expect(try node(#"{"a":1}"#) == (try node(#"{"a":1.0}"#)))
        #expect(try node(#"{"a":1,".priority":1}"#) != (try node(#"{"a":1}"#)))
        #expect(try node(#"{"a":{"b":[1,2]}}"#) == (try node(#"{"a":{"b":{"1":2,"0":1}}}"#)))
    }

    @Test("depth counts object levels")
    func depth() throws {
        #expect(try node("1").depth == 0)
        #expect(try node(#"{"a":{"b":1}}"#).depth == 2)
    }

    @Test("plain JSON strips priorities and renders array-like objects as arrays (data-model.md §5)", arguments: [
        (#"{"0":"a","1":"b","2":"c"}"#, #"["a","b","c"]"#),
        (#"{"0":"a","2":"c"}"#, #"["a",null,"c"]"#),
        (#"{"2":"a","4":"c"}"#, #"{"2":"a","4":"c"}"#),
        (#"{"1":"a"}"#, #"[null,"a"]"#),
        (#"{"3":"a","4":"b"}"#, #"{"3":"a","4":"b"}"#),
        (#"{"0":"a","01":"b"}"#, #"{"0":"a","01":"b"}"#),
        (#"{"0":{".value":1,".priority":2},".priority":3}"#, "[1]"),
        (#"{"a":{"0":true,"1":false}}"#, #"{"a":[true,false]}"#),
        (#"{"-1":1,"0":2}"#, #"{"-1":1,"0":2}"#),
    ])
    func plainJSON(text: String, expected: String) throws {
        var writer = JSONWriter()
        writer.writePlain(try node(text))
        #expect(String(decoding: writer.bytes, as: UTF8.self) == expected)
    }

    @Test("strings are escaped as JSON.stringify does")
    func escaping() {
        var writer = JSONWriter()
        writer.writeString("a\"b\\c/d\u{8}\u{C}\n\r\t\u{1}\u{1F}\u{7F}é😀\u{2028}")
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "\"a\\\"b\\\\c/d\\b\\f\\n\\r\\t\\u0001\\u001f\u{7F}é😀\u{2028}\"")
    }

    @Test("export output parses back to the same node")
    func exportRoundTrip() throws {
        let text = #"{"a":{"x":{".value":"s",".priority":"p"},"y":[1,2.5,-3e-9]},"b":{"c":true,".priority":4},"é":"\u001f"}"#
        let first = try node(text)
        let second = try node(export(first))
        #expect(first == second)
        #expect(export(second) == export(first))
    }
}

@Suite("NodeHash")
struct NodeHashTests {
    /// Vectors from wire-protocol.md §8.3 (JS SDK test vectors and urish/firebase-server).
    @Test("matches the SDK's hash vectors", arguments: [
        ("5", "w28swksk9+tXf5jEdS9R5oSFAv8="),
        ("6", "qb1N9GrUXfC3JyZPF8EXiNYcv4I="),
        ("true", "E5z61QM0lN/U2WsOnusszCTkR8M="),
        ("false", "aSSNoqcS4oQwJ2xxH20rvpp3zP0="),
        ("500", "Ajg9bohDwTVmqR14o1bVJnneryM="),
        (#""Hello World""#, "B8HWXc7zXMjrsnJxPRj7wrNGqt4="),
        (#"{"foo":"bar"}"#, "XnLeTeWQmzTHImTbSMDLg/qMrKY="),
        (#"{"name":"alice","score":10}"#, "VXyngTbGPVLJVIlCuwPFLFZsoDY="),
        (#"{"10":"c","2":"b","a":"x"}"#, "ve4o4odjQgqhJDIXFEMHwyItQOI="),
        (#"{".value":"hi",".priority":1}"#, "Xe7+tbnM6t2/19hT9pko7UKpR4c="),
        (#"{"intNode":4,"doubleNode":4.5623,"stringNode":"hey guys","boolNode":true}"#, "6Mc4jFmNdrLVIlJJjz2/MakTK9I="),
        (#"{"root":{"c":{".value":99,".priority":"abc"},".priority":"def"}}"#, "Fm6tzN4CVEu5WxFDZUdTtqbTVaA="),
        (#"{"root":{"c":{".value":99,".priority":42},".priority":3.14}}"#, "B15QCqrzCxrI5zz1y00arWqFRFg="),
        ("0", "7ysMph9WPitGP7poMnMHMVPtUlI="),
        ("null", ""),
    ])
    func vectors(json: String, expected: String) throws {
        #expect(sdkHash(try node(json)) == expected)
    }

    @Test("builds the documented hash input strings")
    func representations() throws {
        let leaf = try node(#"{".value":"hi",".priority":1}"#)
        #expect(NodeHash.representation(of: leaf) { _ in "" } == "priority:number:3ff0000000000000:string:hi")
        #expect(NodeHash.hexBits(-0.0) == "8000000000000000")
        #expect(NodeHash.hexBits(0.1) == "3fb999999999999a")
        let object = try node(#"{"b":1,"a":{".value":2,".priority":"z"},"c":{".value":3,".priority":5}}"#)
        let order = NodeHash.representation(of: object) { child in export(child) }
        #expect(order == #":b:1:c:{".value":3,".priority":5}:a:{".value":2,".priority":"z"}"#)
    }
}
