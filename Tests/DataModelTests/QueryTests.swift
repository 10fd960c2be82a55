import Testing

@testable import DataModel

@Suite("Query ordering and evaluation")
struct QueryTests {
    private func query(_ wire: String) throws -> QueryParams {
        try QueryParams(wireObject: JSONReader.readValue(Array(wire.utf8)))
    }

    private func keys(_ wire: String, _ data: String) throws -> [String] {
        try query(wire).select(from: node(data)).map(\.key.string)
    }

    @Test("value order: null, false, true, numbers, strings, objects; ties by key (§7.2)")
    func valueOrder() throws {
        let data = #"{"o2":{"x":1},"s":"a","n2":2,"t":true,"f":false,"n1":-1,"o1":{"y":1},"s0":"","10":1,"2":1}"#
        #expect(try keys(#"{"i":".value","sp":null}"#, data) == ["f", "t", "n1", "2", "10", "n2", "s0", "s", "o1", "o2"])
    }

    @Test("child order reads the child path; leaves and missing paths sort as null (§7.3)")
    func childOrder() throws {
        let data = #"{"a":{"s":{"t":3}},"b":{"s":{"t":1}},"c":{"s":2},"d":7,"e":{"s":{"t":"x"}},"f":{"s":{"t":{"u":1}}}}"#
        #expect(try keys(#"{"i":"s/t","sp":null}"#, data) == ["c", "d", "b", "a", "e", "f"])
    }

    @Test("priority order: none, numbers, strings; ties by key (§7.4)")
    func priorityOrder() throws {
        let data = #"{"a":{".value":1,".priority":"b"},"b":{".value":1,".priority":2},"c":1,"d":{".value":1,".priority":"a"},"e":{".value":1,".priority":-5},"2":1}"#
        #expect(try keys(#"{"sp":null}"#, data) == ["2", "c", "e", "b", "d", "a"])
        #expect(try keys(#"{"l":3,"vf":"r"}"#, data) == ["b", "d", "a"])
    }

    @Test("key order puts integer keys first (§7.1)")
    func keyOrder() throws {
        let data = #"{"b":1,"10":1,"a":1,"2":1,"-1":1,"007":1,"7":1}"#
        #expect(try keys(#"{"i":".key","l":10,"vf":"l"}"#, data) == ["-1", "2", "7", "007", "10", "a", "b"])
        #expect(try keys(#"{"i":".key","sp":"-"}"#, data) == ["a", "b"])  // "-" is a string key: after all integers
        #expect(try keys(#"{"i":".key","sp":"7","sin":false}"#, data) == ["007", "10", "a", "b"])
        #expect(try keys(#"{"i":".key","ep":"7","ein":false}"#, data) == ["-1", "2"])
    }

    private let scores = #"{"alice":{"points":40},"bob":{"points":75},"carol":{"points":75},"dave":{"points":120}}"#

    @Test("range queries from every SDK (wire-protocol.md Example 8)", arguments: [
        (#"{"sp":50,"sin":true,"ep":100,"ein":true,"i":"points"}"#, ["bob", "carol"]),
        (#"{"sp":75,"sn":"bob","sin":false,"i":"points"}"#, ["carol", "dave"]),
        (#"{"sp":75,"sn":"bob ","i":"points"}"#, ["carol", "dave"]),
        (#"{"sp":75,"sn":"[MAX_KEY]","i":"points"}"#, ["dave"]),
        (#"{"sp":75,"sn":"[MAX_NAME]","sin":false,"i":"points"}"#, ["dave"]),
        (#"{"sp":75,"sn":"carol","sin":true,"ep":75,"en":"carol","ein":true,"i":"points"}"#, ["carol"]),
        (#"{"sp":75,"ep":75,"i":"points"}"#, ["bob", "carol"]),
        (#"{"ep":75,"en":"[MIN_NAME]","ein":false,"i":"points"}"#, ["alice"]),
        (#"{"l":1,"vf":"r","i":"points"}"#, ["dave"]),
        (#"{"l":2,"vf":"l","i":"points"}"#, ["alice", "bob"]),
        (#"{"sp":50,"l":2,"vf":"r","i":"points"}"#, ["carol", "dave"]),
        (#"{"sp":200,"i":"points"}"#, []),
    ])
    func rangeQueries(wire: String, expected: [String]) throws {
        #expect(try keys(wire, scores) == expected)
    }

    @Test("startAt(null) includes children missing the path; equalTo(null) selects exactly those")
    func nullBounds() throws {
        let data = #"{"a":{"x":1},"b":{"y":2},"c":3,"d":{"x":"s"}}"#
        #expect(try keys(#"{"sp":null,"i":"x"}"#, data) == ["b", "c", "a", "d"])
        #expect(try keys(#"{"sp":null,"ep":null,"i":"x"}"#, data) == ["b", "c"])
        #expect(try keys(#"{"sp":1,"i":"x"}"#, data) == ["a", "d"])  // strings sort after numbers: not filtered by type
    }

    @Test("the result drops the location's priority and keeps the children's")
    func resultPriorities() throws {
        let data = try node(#"{"a":{".value":1,".priority":2},"b":2,".priority":9}"#)
        #expect(export(try query(#"{"l":5,"vf":"l"}"#).result(from: data)) == #"{"a":{".value":1,".priority":2},"b":2}"#)
        #expect(export(QueryParams.all.result(from: data)) == export(data))
    }

    @Test("parses and re-encodes wire query objects", arguments: [
        #"{"l":2,"vf":"r"}"#,
        #"{"sp":50,"ep":100,"i":"score"}"#,
        #"{"sp":7,"sn":"bob","ep":7,"en":"bob","i":"score"}"#,
        #"{"sp":"m","sin":false,"l":10,"vf":"l","i":".key"}"#,
        #"{"ep":3,"en":"[MIN_NAME]","i":".value"}"#,
        #"{"sp":1,"sn":"k","l":5,"vf":"l"}"#,
        #"{"sp":null,"i":"a/b"}"#,
    ])
    func wireRoundTrip(wire: String) throws {
        let parsed = try query(wire)
        #expect(parsed.wireObject.description == wire)
        #expect(try QueryParams(wireObject: parsed.wireObject) == parsed)
    }

    @Test("equal queries from different SDKs are equal values with one identifier")
    func normalization() throws {
        let js = try query(#"{"sp":75,"sn":"[MAX_NAME]","sin":false,"i":"points"}"#)
        let android = try query(#"{"sp":75,"sn":"[MAX_KEY]","i":"points"}"#)
        #expect(js == android)
        #expect(js.hashValue == android.hashValue)
        #expect(js.identifier == android.identifier)
        #expect(try query("{}").identifier == "default")
        #expect(try query(#"{"vf":"r","l":2}"#).identifier == #"{"l":2,"vf":"r"}"#)
        #expect(try query("{}").loadsAllData)
        #expect(try query(#"{"i":"x"}"#).loadsAllData)
    }

    @Test("rejects invalid query objects", arguments: [
        ("[]", QueryError.notAnObject),
        (#"{"i":5}"#, .invalidMember("i")),
        (#"{"i":"a.b"}"#, .invalidIndexPath(.invalidKey("a.b"))),
        (#"{"i":"/"}"#, .invalidIndexPath(.emptyKey)),
        (#"{"i":".key","sp":5}"#, .invalidBound("sp")),
        (#"{"sp":true}"#, .invalidBound("sp")),
        (#"{"i":"x","ep":{"a":1}}"#, .invalidBound("ep")),
        (#"{"l":0}"#, .invalidLimit),
        (#"{"l":1.5}"#, .invalidLimit),
        (#"{"l":"3"}"#, .invalidLimit),
        (#"{"l":3,"vf":"x"}"#, .invalidMember("vf")),
        (#"{"sp":1,"sin":"no"}"#, .invalidMember("sin")),
        (#"{"sp":1,"sn":2}"#, .invalidMember("sn")),
    ])
    func invalidQueries(wire: String, error: QueryError) {
        #expect(throws: error) { try query(wire) }
    }
}

@Suite("QueryWindow")
struct QueryWindowTests {
    /// Applies one child write to a location, its index and a window; returns the window's events.
    private func write(
        _ value: Node, at name: String, location: inout Node, index: inout ChildIndex, window: inout QueryWindow
    ) throws -> [String] {
        let key = try Key(name)
        let old = location.child(key)
        location.setChild(key, to: value)
        index.update(key: key, from: old, to: value)
        return window.apply([ChildChange(key: key, old: old, new: value)], index: index, node: location).map(\.description)
    }

    @Test("a limitToLast(2) window slides and refills (wire-protocol.md Example 7)")
    func slidingWindow() throws {
        var location = try node(#"{"m1":{"text":"a"},"m2":{"text":"b"},"m3":{"text":"c"}}"#)
        let query = QueryParams(limit: 2, anchor: .last)
        var index = ChildIndex(index: .priority, over: location)
        var window = QueryWindow(query: query, index: index)
        #expect(window.selectedKeys(index: index).map(\.string) == ["m2", "m3"])

        let added = try write(try node(#"{"text":"d"}"#), at: "m4", location: &location, index: &index, window: &window)
        #expect(added == ["child_removed m2", "child_added m4 after m3", "value"])
        #expect(export(window.result(from: location, index: index)) == #"{"m3":{"text":"c"},"m4":{"text":"d"}}"#)

        let removed = try write(.empty, at: "m4", location: &location, index: &index, window: &window)
        #expect(removed == ["child_removed m4", "child_added m2 after -", "value"])

        let outside = try write(try node(#"{"text":"z"}"#), at: "m1", location: &location, index: &index, window: &window)
        #expect(outside.isEmpty)

        let changed = try write(try node(#"{"text":"C"}"#), at: "m3", location: &location, index: &index, window: &window)
        #expect(changed == ["child_changed m3 after m2", "value"])
    }

    @Test("a child whose sort value changes moves: child_moved before child_changed")
    func moves() throws {
        var location = try node(#"{"a":{"s":1},"b":{"s":2},"c":{"s":3}}"#)
        let query = QueryParams(index: .child(try Path("s")), start: QueryBound(value: .null, name: .min))
        var index = ChildIndex(index: query.index, over: location)
        var window = QueryWindow(query: query, index: index)
        let events = try write(try node(#"{"s":5}"#), at: "a", location: &location, index: &index, window: &window)
        #expect(events == ["child_moved a after c", "child_changed a after c", "value"])
        let same = try write(try node(#"{"s":5,"t":1}"#), at: "a", location: &location, index: &index, window: &window)
        #expect(same == ["child_changed a after c", "value"])
    }

    @Test("range windows add and remove children crossing the bounds")
    func ranges() throws {
        var location = try node(#"{"a":1,"b":5,"c":9}"#)
        let query = QueryParams(
            index: .value, start: QueryBound(value: .number(2), name: .min), end: QueryBound(value: .number(8), name: .max))
        var index = ChildIndex(index: .value, over: location)
        var window = QueryWindow(query: query, index: index)
        #expect(try write(Node(.number(3)), at: "a", location: &location, index: &index, window: &window)
            == ["child_added a after -", "value"])
        #expect(try write(Node(.number(10)), at: "b", location: &location, index: &index, window: &window)
            == ["child_removed b", "value"])
        #expect(try write(Node(.number(11)), at: "c", location: &location, index: &index, window: &window) == [])
    }
}
