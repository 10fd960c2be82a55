import DataModel
import Testing
import Wire

@Suite("ServerMessage encoding")
struct ServerMessageEncodingTests {
    private func node(_ json: String) throws -> Node {
        try JSONReader.readData(bytes(json)).node
    }

    private func path(_ text: String) throws -> Path { try Path(text) }

    private func expectEncoding(_ message: ServerMessage, _ fixture: String, _ id: String) throws {
        #expect(text(message.encoded()) == (try fixtureFrame(fixture, id)), "\(fixture)/\(id)")
    }

    @Test("the hello: integer ts, version 5, the echoed host, the session id")
    func hello() throws {
        try expectEncoding(
            .handshake(Handshake(timestamp: 1_718_049_600_000, host: "localhost:9000", sessionID: "Zq3k8bJd0Pw1RtXy9LmN4cVa7EeS2uHo")),
            "example-01-handshake-stats-auth", "hello")
    }

    @Test("responses: ok with an empty string, listen ok with an object, failures with their message")
    func responses() throws {
        try expectEncoding(.ok(1), "example-01-handshake-stats-auth", "stats-ok")
        try expectEncoding(.ok(4), "example-03-put-fan-out", "put-ok")
        try expectEncoding(.listenOK(3), "example-02-listen-initial-data", "listen-ok")
        try expectEncoding(.listenOK(3, warnings: [ResponsePayload.noIndexWarning]), "server-other-messages", "listen-ok-no-index")
        try expectEncoding(
            .failure(7, status: .dataStale, message: "Transaction hash does not match"),
            "example-05-transaction-datastale", "datastale")
        try expectEncoding(
            .failure(17, status: .permissionDenied, message: "Permission denied"), "example-09-permission-denied",
            "listen-denied")
        try expectEncoding(
            .failure(2, status: .invalidToken, message: "Could not parse auth token."), "example-01-handshake-stats-auth",
            "auth-invalid")
        try expectEncoding(
            .failure(
                4, status: .tooBig,
                message: "The data requested exceeds the maximum size that can be accessed with a single request."),
            "server-other-messages", "too-big")
        let authInfo = JSONValue.object([
            ("auth", .object([("uid", .string("alice")), ("provider", .string("password"))])),
            ("expires", .number(1_718_053_200)),
        ])
        try expectEncoding(
            .response(requestNumber: 2, status: .ok, payload: .json(authInfo)), "example-01-handshake-stats-auth", "auth-ok")
    }

    @Test("a get result is data in export format, priorities included")
    func getResult() throws {
        let config = try node(#"{"theme":"dark","motd":{".value":"hi",".priority":1}}"#)
        try expectEncoding(.response(requestNumber: 20, status: .ok, payload: .data(config)), "example-11-get", "get-result")
        try expectEncoding(
            .response(requestNumber: 21, status: .ok, payload: .data(try node(#"{"dave":{"points":120}}"#))),
            "example-11-get", "get-query-result")
    }

    @Test("data pushes, untagged and tagged, and the null push")
    func dataPushes() throws {
        try expectEncoding(
            .dataPush(path: try path("/rooms/r1"), data: try node(#"{"title":"Lobby","members":{"alice":true,"bob":true}}"#), tag: nil),
            "example-02-listen-initial-data", "initial-data")
        try expectEncoding(
            .dataPush(path: try path("rooms/r1/title"), data: Node(.string("Main hall")), tag: nil),
            "example-03-put-fan-out", "push-b")
        try expectEncoding(
            .dataPush(path: try path("/counters/likes"), data: Node(.number(5)), tag: nil),
            "example-05-transaction-datastale", "initial-data")
        try expectEncoding(
            .dataPush(path: try path("/messages"), data: try node(#"{"m2":{"text":"b"},"m3":{"text":"c"}}"#), tag: 1),
            "example-07-limit-window", "initial-window")
        try expectEncoding(.dataPush(path: .root, data: .empty, tag: nil), "server-other-messages", "push-root-null")
    }

    @Test("merge pushes keep their order, null deletes, priorities are relative targets")
    func mergePushes() throws {
        let members = [
            MergeChange(target: .node(try path("members/carol")), node: Node(.bool(true))),
            MergeChange(target: .node(try path("members/bob")), node: .empty),
            MergeChange(target: .node(try path("updatedAt")), node: Node(.number(1_718_049_612_345))),
        ]
        try expectEncoding(
            .mergePush(path: try path("/rooms/r1"), changes: members, tag: nil), "example-04-merge-server-timestamp",
            "merge-push-b")
        let window = [
            MergeChange(target: .node(try path("m4")), node: .empty),
            MergeChange(target: .node(try path("m2")), node: try node(#"{"text":"b"}"#)),
        ]
        try expectEncoding(.mergePush(path: try path("/messages"), changes: window, tag: 1), "example-07-limit-window", "window-remove")
        let priorities = [
            MergeChange(target: .priority(of: try path("b")), node: Node(.number(5))),
            MergeChange(target: .priority(of: .root), node: Node(.string("x"))),
        ]
        try expectEncoding(.mergePush(path: try path("/a"), changes: priorities, tag: nil), "server-other-messages", "merge-priorities")
    }

    @Test("a revoked tagged listen echoes the client's own query object")
    func revocations() throws {
        try expectEncoding(.listenRevoked(path: try path("/rooms/r1"), query: nil), "example-09-permission-denied", "revoke-default")
        let listen = try ClientMessage.parse(bytes(try fixtureFrame("example-08-range-query-sdks", "listen-range-js")))
        guard case .request(let request) = listen, case .listen(let scores) = request.action else {
            throw FixtureError.missing("listen-range-js")
        }
        try expectEncoding(
            .listenRevoked(path: scores.path, query: scores.queryObject), "example-09-permission-denied", "revoke-tagged")
        try expectEncoding(
            .authRevoked(status: .expiredToken, reason: "Auth token is expired."), "example-12-framing-keepalive-ping",
            "auth-revoked")
        try expectEncoding(
            .appCheckRevoked(status: .invalidToken, reason: "Invalid appcheck token"), "server-other-messages",
            "appcheck-revoked")
        try expectEncoding(
            .securityDebug(message: "Attempt to read /admin with auth=null"), "server-other-messages", "security-debug")
    }

    @Test("control messages: pong, reset, shutdown, error")
    func controls() throws {
        try expectEncoding(.pong, "example-12-framing-keepalive-ping", "pong")
        try expectEncoding(.reset(host: "db2.example.com:9000"), "server-other-messages", "reset")
        try expectEncoding(.shutdown(reason: "Database deleted"), "server-other-messages", "shutdown")
        try expectEncoding(.error("Invalid frame count"), "server-other-messages", "control-error")
    }

    @Test("strings are escaped as JSON.stringify does")
    func escaping() throws {
        let message = ServerMessage.failure(1, status: .permissionDenied, message: "a\"b\\c\n\u{1}é")
        #expect(text(message.encoded()) == #"{"t":"d","d":{"r":1,"b":{"s":"permission_denied","d":"a\"b\\c\n\u0001é"}}}"#)
        let push = ServerMessage.dataPush(path: try path("/q\"uote"), data: Node(.bool(false)), tag: nil)
        #expect(text(push.encoded()) == #"{"t":"d","d":{"a":"d","b":{"p":"/q\"uote","d":false}}}"#)
    }
}

@Suite("EncodedPush")
struct EncodedPushTests {
    private func path(_ text: String) throws -> Path { try Path(text) }

    @Test("body plus suffix is byte-identical to the ServerMessage encoding, tagged and untagged", arguments: [nil, 1, 42, 9_007_199_254_740_991])
    func matchesServerMessage(tag: Int?) throws {
        let data = try JSONReader.readData(bytes(#"{"b":{".value":1,".priority":"p"},"a":[1,2]}"#)).node
        let push = EncodedPush(path: try path("/rooms/r1"), data: data)
        let expected = ServerMessage.dataPush(path: try path("/rooms/r1"), data: data, tag: tag).encoded()
        #expect(push.message(tag: tag) == expected)
        #expect(push.body + EncodedPush.suffix(tag: tag) == expected)
        #expect(try push.frames(tag: tag) == [expected])
        let changes = [MergeChange(target: .node(try path("x/y")), node: .empty)]
        let merge = EncodedPush(path: try path("/rooms"), changes: changes)
        #expect(merge.message(tag: tag) == ServerMessage.mergePush(path: try path("/rooms"), changes: changes, tag: tag).encoded())
    }

    @Test("only the suffix differs between listens, and it stays small")
    func suffixes() {
        #expect(text(EncodedPush.suffix(tag: nil)) == "}}}")
        #expect(text(EncodedPush.suffix(tag: 7)) == #","t":7}}}"#)
        #expect(EncodedPush.suffix(tag: 9_007_199_254_740_991).count <= 24)
    }

    @Test("a large push is split into frames that reassemble to the message")
    func largePush() throws {
        let big = Node(.string(String(repeating: "é", count: 20_000)))
        let push = EncodedPush(path: try path("/big"), data: big)
        let frames = try push.frames(tag: 3)
        #expect(frames.count == 3 && frames[0] == bytes("2"))
        var assembler = FrameAssembler()
        var result: FrameAssembler.Output?
        for frame in frames { result = try assembler.receive(frame) }
        #expect(result == .message(push.message(tag: 3)))
    }
}
