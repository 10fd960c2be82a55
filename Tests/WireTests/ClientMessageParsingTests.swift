import DataModel
import Testing
import Wire

@Suite("ClientMessage parsing")
struct ClientMessageParsingTests {
    private func request(_ fixture: String, _ id: String) throws -> ClientRequest {
        let message = try ClientMessage.parse(bytes(try fixtureFrame(fixture, id)))
        guard case .request(let request) = message else {
            Issue.record("\(fixture)/\(id) is not a request: \(message)")
            throw FixtureError.missing("request \(fixture)/\(id)")
        }
        return request
    }

    private func path(_ text: String) throws -> Path { try Path(text) }

    @Test("stats keep their counters; auth and gauth keep method, credential and overrides")
    func statsAndAuth() throws {
        #expect(
            try request("example-01-handshake-stats-auth", "stats")
                == ClientRequest(number: 1, action: .stats(counters: .object([("sdk.js.1-0-8", .number(1))]))))
        let auth = try request("example-01-handshake-stats-auth", "auth")
        guard case .auth(let credentials) = auth.action else { throw FixtureError.missing("auth") }
        #expect(auth.number == 2 && credentials.method == .auth && credentials.credential.hasPrefix("eyJhbGci"))
        #expect(
            try request("example-01-handshake-stats-auth", "gauth-owner").action
                == .auth(AuthRequest(method: .gauth, credential: "owner")))
        #expect(
            try request("client-other-actions", "gauth-authvar").action
                == .auth(
                    AuthRequest(
                        method: .gauth, credential: "owner",
                        authVariable: .object([("uid", .string("service-worker"))]))))
        #expect(
            try request("client-other-actions", "gauth-noauth").action
                == .auth(AuthRequest(method: .gauth, credential: "owner", noAuth: true)))
        #expect(try request("client-other-actions", "unauth").action == .unauth)
    }

    @Test("App Check actions, with the JS SDK's unappeck spelling")
    func appCheck() throws {
        #expect(
            try request("client-other-actions", "appcheck").action == .appCheck(token: "eyJhcHBjaGVjayI6dHJ1ZX0"))
        #expect(try request("client-other-actions", "unappeck-js").action == .unappCheck)
        #expect(try request("client-other-actions", "unappcheck-android").action == .unappCheck)
    }

    @Test("a default listen is the same listen whether the path has a leading slash or not")
    func defaultListenPathForms() throws {
        let js = try request("example-02-listen-initial-data", "listen-js")
        let android = try request("example-02-listen-initial-data", "listen-android")
        let expected = ListenRequest(path: try path("rooms/r1"), hash: "")
        #expect(js == ClientRequest(number: 3, action: .listen(expected)))
        #expect(android == ClientRequest(number: 5, action: .listen(expected)))
        #expect(expected.key == ListenKey(path: try path("/rooms/r1"), tag: nil))
        #expect(expected.viewQuery == .all)
    }

    @Test("a tagged listen carries its query, the query object as sent, its tag and its hash")
    func taggedListen() throws {
        let listen = try request("example-07-limit-window", "listen")
        guard case .listen(let window) = listen.action else { throw FixtureError.missing("listen") }
        #expect(window.path == (try path("/messages")))
        #expect(window.query == QueryParams(limit: 2, anchor: .last))
        #expect(window.queryObject == .object([("l", .number(2)), ("vf", .string("r"))]))
        #expect(window.tag == 1 && window.hash == "")
        #expect(window.key == ListenKey(path: try path("/messages"), tag: 1))
        let unlisten = try request("example-07-limit-window", "unlisten")
        guard case .unlisten(let removal) = unlisten.action else { throw FixtureError.missing("unlisten") }
        #expect(removal.key == window.key && removal.query == window.query)
    }

    @Test("equal queries from different SDKs share one view; different ones do not")
    func queryIdentityAcrossSDKs() throws {
        func viewQuery(_ id: String) throws -> QueryParams {
            guard case .listen(let listen) = try request("example-08-range-query-sdks", id).action else {
                throw FixtureError.missing(id)
            }
            return listen.viewQuery
        }
        let android = try viewQuery("start-after-android")
        let js = try viewQuery("start-after-js")
        #expect(android == js)
        #expect(android.identifier == js.identifier)
        #expect(try viewQuery("start-after-key-js") != viewQuery("start-after-key-ios"))
        #expect(try viewQuery("listen-range-js") != js)
        let range = try viewQuery("listen-range-js")
        #expect(range.index == .child(try path("points")))
        #expect(range.start?.value == .number(50) && range.end?.value == .number(100))
    }

    @Test("puts keep the compare-and-set hash; an empty hash means only an empty location")
    func puts() throws {
        let stale = try request("example-05-transaction-datastale", "put-stale")
        #expect(
            stale.action
                == .put(
                    PutRequest(
                        target: .node(try path("/counters/likes")), value: WriteValue(node: Node(.number(1))), hash: "")))
        guard case .put(let hashed) = try request("example-05-transaction-datastale", "put-hashed").action else {
            throw FixtureError.missing("put-hashed")
        }
        #expect(hashed.hash == "w28swksk9+tXf5jEdS9R5oSFAv8=")
        let plain = try request("example-03-put-fan-out", "put")
        guard case .put(let title) = plain.action else { throw FixtureError.missing("put") }
        #expect(title.hash == nil && title.value.node == Node(.string("Main hall")))
    }

    @Test("setPriority targets the priority; a wrapped value keeps its priority")
    func priorities() throws {
        guard case .put(let priority) = try request("client-other-actions", "set-priority").action else {
            throw FixtureError.missing("set-priority")
        }
        #expect(priority.target == .priority(of: try path("/a/b")))
        #expect(priority.value.node == Node(.number(5)))
        guard case .put(let wrapped) = try request("client-other-actions", "set-with-priority").action else {
            throw FixtureError.missing("set-with-priority")
        }
        #expect(wrapped.value.node == Node(.string("hi"), priority: .number(2)))
    }

    @Test("server values stay placeholders in puts and merges")
    func serverValues() throws {
        guard case .put(let increment) = try request("example-10-concurrent-increments", "increment-android").action
        else { throw FixtureError.missing("increment-android") }
        #expect(increment.target == .node(try path("/stats/visits")))
        #expect(increment.value.serverValues == [ServerValuePlaceholder(path: .root, isPriority: false, value: .increment(1))])
        guard case .merge(let merge) = try request("example-04-merge-server-timestamp", "merge").action else {
            throw FixtureError.missing("merge")
        }
        #expect(merge.path == (try path("/rooms/r1")))
        #expect(
            merge.entries.map(\.target) == [
                .node(try path("members/carol")), .node(try path("members/bob")), .node(try path("updatedAt")),
            ])
        #expect(merge.entries[1].value.node.isEmpty)
        #expect(merge.entries[2].value.serverValues.map(\.value) == [.timestamp])
    }

    @Test("onDisconnect put, merge and cancel")
    func onDisconnect() throws {
        guard case .onDisconnectPut(let put) = try request("example-06-on-disconnect", "on-disconnect-put").action
        else { throw FixtureError.missing("on-disconnect-put") }
        #expect(put.target == .node(try path("/status/alice")) && put.hash == nil)
        #expect(put.value.serverValues == [ServerValuePlaceholder(path: try path("lastSeen"), isPriority: false, value: .timestamp)])
        guard case .onDisconnectMerge(let merge) = try request("example-06-on-disconnect", "on-disconnect-merge").action
        else { throw FixtureError.missing("on-disconnect-merge") }
        #expect(merge.entries.map(\.target) == [.node(try path("members/alice"))])
        #expect(
            try request("example-06-on-disconnect", "on-disconnect-cancel").action
                == .onDisconnectCancel(path: try path("/status/alice")))
    }

    @Test("get with an empty and with a real query")
    func gets() throws {
        guard case .get(let plain) = try request("example-11-get", "get").action else { throw FixtureError.missing("get") }
        #expect(plain.path == (try path("/config")) && plain.query == .all)
        guard case .get(let limited) = try request("example-11-get", "get-query").action else {
            throw FixtureError.missing("get-query")
        }
        #expect(limited.query == QueryParams(index: .child(try path("points")), limit: 1, anchor: .last))
    }

    @Test("legacy aliases, compound hashes, numbers as strings and null optional members")
    func lenientForms() throws {
        #expect(
            try request("client-other-actions", "legacy-listen").action
                == .listen(ListenRequest(path: try path("legacy"), hash: "")))
        #expect(
            try request("client-other-actions", "legacy-unlisten").action
                == .unlisten(UnlistenRequest(path: try path("legacy"))))
        guard case .listen(let compound) = try request("client-other-actions", "compound-hash").action else {
            throw FixtureError.missing("compound-hash")
        }
        #expect(compound.compoundHash == CompoundHash(paths: [try path("m5")], hashes: ["a1", "b2"]))
        let strings = try request("client-other-actions", "numbers-as-strings")
        guard case .listen(let listen) = strings.action else { throw FixtureError.missing("numbers-as-strings") }
        #expect(strings.number == 9 && listen.tag == 5 && listen.hash == nil)
        guard case .put(let root) = try request("client-other-actions", "put-root").action else {
            throw FixtureError.missing("put-root")
        }
        #expect(root.target == .node(.root))
    }

    @Test("control messages: ping, switch ack, end of transmission")
    func controls() throws {
        #expect(try ClientMessage.parse(bytes(fixtureFrame("example-12-framing-keepalive-ping", "ping"))) == .control(.ping))
        #expect(try ClientMessage.parse(bytes(fixtureFrame("client-other-actions", "switch-ack"))) == .control(.switchAck))
        #expect(
            try ClientMessage.parse(bytes(fixtureFrame("client-other-actions", "end-of-transmission")))
                == .control(.endOfTransmission))
    }

    @Test("action names are the canonical wire names")
    func actionNames() throws {
        #expect(try request("client-other-actions", "unappeck-js").action.name == "unappcheck")
        #expect(try request("client-other-actions", "legacy-listen").action.name == "q")
        #expect(try request("example-01-handshake-stats-auth", "gauth-owner").action.name == "gauth")
        #expect(try request("example-06-on-disconnect", "on-disconnect-cancel").action.name == "oc")
    }

    @Test("whitespace and member order do not matter; unknown members are ignored")
    func looseLayout() throws {
        let message = try ClientMessage.parse(
            bytes(#" { "d" : { "b" : { "x" : [1], "h" : "", "p" : "/a" } , "a" : "q" , "r" : 4 } , "t" : "d" } "#))
        #expect(message == .request(ClientRequest(number: 4, action: .listen(ListenRequest(path: try path("/a"), hash: "")))))
    }

    @Test("written data is checked against the depth of its path")
    func dataDepth() throws {
        let deepPath = (1...31).map { "k\($0)" }.joined(separator: "/")
        let fits = bytes(#"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/\#(deepPath)","d":{"x":1}}}}"#)
        #expect(throws: Never.self) { try ClientMessage.parse(fits) }
        let tooDeep = bytes(#"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/\#(deepPath)","d":{"x":{"y":1}}}}}"#)
        #expect(throws: WireError.self) { try ClientMessage.parse(tooDeep) }
    }
}
