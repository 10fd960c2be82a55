import Testing

@testable import DataModel

@Suite("JSONReader.readData")
struct DataReaderTests {
    private func dataError(_ text: String, depth: Int = 0, limits: DataLimits = .default) -> JSONError? {
        do {
            _ = try JSONReader.readData(Array(text.utf8), depth: depth, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    @Test("empty objects, null children and arrays of nulls are empty", arguments: [
        "null", "{}", #"{"a":null}"#, #"{"a":{}}"#, #"{"a":{"b":{}}}"#, "[]", "[null,null]", #"{".priority":5}"#,
        #"{".value":null}"#, #"{"a":{},".priority":"p"}"#,
    ])
    func emptyValues(text: String) throws {
        #expect(try node(text).isEmpty)
    }

    @Test("reads data into export form", arguments: [
        (#"{"b":1,"a":2,"10":3,"2":4}"#, #"{"2":4,"10":3,"a":2,"b":1}"#),
        (#"{".value":5,".priority":1}"#, #"{".value":5,".priority":1}"#),
        (#"{".priority":"x","a":1}"#, #"{"a":1,".priority":"x"}"#),
        (#"{"a":{".value":true,".priority":2.5}}"#, #"{"a":{".value":true,".priority":2.5}}"#),
        (#"{".value":{"x":1},".priority":3}"#, #"{"x":1,".priority":3}"#),
        (#"{"a":1,".priority":null}"#, #"{"a":1}"#),
        (#"[1,null,"x"]"#, #"{"0":1,"2":"x"}"#),
        ("[[1]]", #"{"0":{"0":1}}"#),
        ("-0", "0"),
        (#"{"a":-0.0}"#, #"{"a":0}"#),
        (#""x\u0000y""#, #""x\u0000y""#),
        (#"{"é":1,"e\u0301":2}"#, #"{"e\#u{301}":2,"é":1}"#),
    ])
    func exportForms(text: String, expected: String) throws {
        #expect(export(try node(text)) == expected)
    }

    @Test("rejects invalid Firebase data with the offset of the culprit", arguments: [
        (#"{"a.b":1}"#, 1, ValueError.invalidKey(.invalidKey("a.b"))),
        (#"{"a":{"$x":1}}"#, 6, .invalidKey(.invalidKey("$x"))),
        (#"{".foo":1}"#, 1, .invalidKey(.invalidKey(".foo"))),
        (#"{"":1}"#, 1, .invalidKey(.emptyKey)),
        (#"{".priority":true,"a":1}"#, 13, .invalidPriority),
        (#"{".priority":{"a":1},"a":1}"#, 13, .invalidPriority),
        (#"{".value":1,"a":2}"#, 0, .metadataWithChildren),
        (#"{".sv":"timestamp","a":2}"#, 0, .metadataWithChildren),
        (#"{".sv":"foo"}"#, 7, .unknownServerValue),
        (#"{".sv":{"increment":"1"}}"#, 7, .unknownServerValue),
        (#"{".sv":{"decrement":1}}"#, 7, .unknownServerValue),
        (#"{"a":1,"a":2}"#, 0, .duplicateKey("a")),
        (#"{"b":1,"a":2,"b":3}"#, 0, .duplicateKey("b")),
    ])
    func invalidData(text: String, offset: Int, error: ValueError) {
        #expect(dataError(text) == JSONError(offset: offset, reason: .invalidData(error)))
    }

    @Test("allows 32 levels from the root, counting the write path")
    func depthLimit() {
        func nested(_ levels: Int) -> String {
            String(repeating: #"{"k":"#, count: levels) + "1" + String(repeating: "}", count: levels)
        }
        #expect(dataError(nested(32)) == nil)
        #expect(dataError(nested(33))?.reason == .invalidData(.tooDeep(depth: 33)))
        #expect(dataError(nested(30), depth: 2) == nil)
        #expect(dataError(nested(30), depth: 3)?.reason == .invalidData(.tooDeep(depth: 33)))
        // .value wrappers do not add levels
        #expect(dataError(#"{".value":{".value":{"a":1}}}"#, depth: 31) == nil)
        let wrappers = String(repeating: #"{".value":"#, count: 200) + "1" + String(repeating: "}", count: 200)
        #expect(dataError(wrappers)?.reason == .nestingTooDeep(limit: JSONReader.defaultMaxNesting))
    }

    @Test("limits string and key sizes")
    func sizeLimits() {
        let limits = DataLimits(maxKeyBytes: 3, maxStringBytes: 4)
        #expect(dataError(#""abcd""#, limits: limits) == nil)
        #expect(dataError(#"{"a":"abcde"}"#, limits: limits) == JSONError(offset: 5, reason: .invalidData(.stringTooLong(byteCount: 5))))
        #expect(dataError(#"{"abcd":1}"#, limits: limits) == JSONError(offset: 1, reason: .invalidData(.invalidKey(.keyTooLong("abcd", byteCount: 4)))))
    }

    @Test("collects server values with their paths")
    func serverValuePlaceholders() throws {
        let value = try JSONReader.readData(Array(#"{"a":{".sv":"timestamp"},"b":{"c":{".sv":{"increment":2}}},".priority":{".sv":"timestamp"}}"#.utf8))
        #expect(value.serverValues == [
            ServerValuePlaceholder(path: try Path("a"), isPriority: false, value: .timestamp),
            ServerValuePlaceholder(path: try Path("b/c"), isPriority: false, value: .increment(2)),
            ServerValuePlaceholder(path: .root, isPriority: true, value: .timestamp),
        ])
        let root = try JSONReader.readData(Array(#"{".sv":"timestamp",".priority":"p"}"#.utf8))
        #expect(root.serverValues == [ServerValuePlaceholder(path: .root, isPriority: false, value: .timestamp)])
        #expect(root.node.priority == .string("p"))
    }

    @Test("reads a large object into a tree, sorted, from unsorted input")
    func largeObject() throws {
        let keys = (0..<1000).map { "k\(($0 * 7919) % 1000)" }
        let text = "{" + keys.map { #""\#($0)":1"# }.joined(separator: ",") + "}"
        let object = try node(text)
        #expect(object.childCount == 1000)
        #expect(Array(object.children.map(\.key.string)) == keys.sorted { Key(unchecked: $0) < Key(unchecked: $1) })
    }
}
