import DataModel
@testable import Gateway
import Testing
import Wire

@Suite("ServerSentEvents: a view's pushes as event-stream events")
struct ServerSentEventsTests {
    private static func events(_ content: PushContent, at location: String) throws -> String {
        text(ServerSentEvents.events(for: content, at: try path(location)))
    }

    private static func put(_ path: String, _ data: String) -> String {
        "event: put\ndata: {\"path\":\"\(path)\",\"data\":\(data)}\n\n"
    }

    @Test(
        "a data push is one put at the path relative to the stream's location",
        arguments: [
            // (stream location, push path, pushed value, expected put path)
            ("/", "/", #"{"a":1}"#, "/"),
            ("/", "/a/b", "1", "/a/b"),
            ("/a", "/a", #"{"b":true}"#, "/"),
            ("/a", "/a/b", "\"x\"", "/b"),
            ("/a", "/a/b/c/d", "[1,2]", "/b/c/d"),
            ("/a/b", "/a", "null", "/"),
            ("/a/b", "/", #"{"z":1}"#, "/"),
        ])
    func dataPush(location: String, pushPath: String, value: String, expectedPath: String) throws {
        let pushed = try node(value)
        var writer = JSONWriter()
        writer.writePlain(pushed)
        let content = PushContent.data(path: try path(pushPath), node: pushed)
        #expect(try Self.events(content, at: location) == Self.put(expectedPath, text(writer.bytes)))
    }

    @Test("the data of a put is plain JSON: no priorities, empty as null")
    func plainData() throws {
        let content = PushContent.data(path: try path("/a"), node: try node(#"{".value":5,".priority":1}"#))
        #expect(try Self.events(content, at: "/a") == Self.put("/", "5"))
        let nested = PushContent.data(path: try path("/a"), node: try node(#"{"b":{".priority":2,"c":1}}"#))
        #expect(try Self.events(nested, at: "/a") == Self.put("/", #"{"b":{"c":1}}"#))
        let deleted = PushContent.data(path: try path("/a/b"), node: .empty)
        #expect(try Self.events(deleted, at: "/a") == Self.put("/b", "null"))
    }

    @Test("a merge whose changes are all direct children is one patch at the merge's path")
    func singleSegmentMerge() throws {
        let changes = [
            MergeChange(target: .node(try path("b")), node: try node("1")),
            MergeChange(target: .node(try path("c")), node: .empty),
            MergeChange(target: .node(try path("d")), node: try node(#"{"e":"f"}"#)),
        ]
        #expect(try Self.events(.merge(path: try path("/a"), changes: changes), at: "/a")
            == "event: patch\ndata: {\"path\":\"/\",\"data\":{\"b\":1,\"c\":null,\"d\":{\"e\":\"f\"}}}\n\n")
        #expect(try Self.events(.merge(path: try path("/a/x"), changes: changes), at: "/a")
            == "event: patch\ndata: {\"path\":\"/x\",\"data\":{\"b\":1,\"c\":null,\"d\":{\"e\":\"f\"}}}\n\n")
        #expect(try Self.events(.merge(path: try path("/a/x"), changes: changes), at: "/")
            == "event: patch\ndata: {\"path\":\"/a/x\",\"data\":{\"b\":1,\"c\":null,\"d\":{\"e\":\"f\"}}}\n\n")
    }

    @Test("a merge with a deeper change is one put per changed location, in order")
    func multiSegmentMerge() throws {
        let changes = [
            MergeChange(target: .node(try path("b/c")), node: try node("1")),
            MergeChange(target: .node(try path("d")), node: try node("2")),
            MergeChange(target: .node(try path("e/f/g")), node: .empty),
        ]
        #expect(try Self.events(.merge(path: try path("/a"), changes: changes), at: "/a")
            == Self.put("/b/c", "1") + Self.put("/d", "2") + Self.put("/e/f/g", "null"))
        #expect(try Self.events(.merge(path: try path("/a/x"), changes: changes), at: "/a")
            == Self.put("/x/b/c", "1") + Self.put("/x/d", "2") + Self.put("/x/e/f/g", "null"))
    }

    @Test("a merge with a priority change is puts for its data changes only; priorities alone send nothing")
    func priorityMerge() throws {
        let mixed = [
            MergeChange(target: .node(try path("b")), node: try node("1")),
            MergeChange(target: .priority(of: try path("c")), node: try node("5")),
            MergeChange(target: .node(try path("d")), node: try node("2")),
        ]
        #expect(try Self.events(.merge(path: try path("/a"), changes: mixed), at: "/a")
            == Self.put("/b", "1") + Self.put("/d", "2"))
        let onlyPriority = [MergeChange(target: .priority(of: try path("c")), node: try node("5"))]
        #expect(try Self.events(.merge(path: try path("/a"), changes: onlyPriority), at: "/a") == "")
    }

    @Test("keys and values that need JSON escaping are escaped, and each event's data stays on one line")
    func escaping() throws {
        let key = "q\"uo\\te"
        let content = PushContent.merge(path: try path("/\(key)"), changes: [
            MergeChange(target: .node(try path(key)), node: .init(.string("line1\nline2\r\"end\""))),
        ])
        let patch = try Self.events(content, at: "/")
        #expect(patch == #"event: patch"# + "\n" + #"data: {"path":"/q\"uo\\te","data":{"q\"uo\\te":"line1\nline2\r\"end\""}}"# + "\n\n")
        let put = try Self.events(.data(path: try path("/\(key)/\(key)"), node: .init(.string("a\u{1}b"))), at: "/")
        #expect(put == Self.put(#"/q\"uo\\te/q\"uo\\te"#, #""a\u0001b""#))
        for events in [patch, put] {
            let lines = events.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.count == 4)
            #expect(lines[0].hasPrefix("event: ") && lines[1].hasPrefix("data: ") && lines[2].isEmpty && lines[3].isEmpty)
        }
    }

    @Test("the initial put carries the location's value at /")
    func initialPut() throws {
        #expect(text(ServerSentEvents.put(at: .root, data: try node(#"{"a":{"b":1}}"#))) == Self.put("/", #"{"a":{"b":1}}"#))
        #expect(text(ServerSentEvents.put(at: .root, data: .empty)) == Self.put("/", "null"))
    }

    @Test("keep-alive, cancel and auth_revoked have the texts clients look for")
    func controlEvents() {
        #expect(text(ServerSentEvents.keepAlive) == "event: keep-alive\ndata: null\n\n")
        #expect(text(ServerSentEvents.cancel) == "event: cancel\ndata: \"Permission denied\"\n\n")
        #expect(text(ServerSentEvents.authRevoked) == "event: auth_revoked\ndata: credential is no longer valid\n\n")
    }
}
