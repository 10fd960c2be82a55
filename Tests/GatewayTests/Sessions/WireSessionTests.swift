import DataModel
@testable import Gateway
import Store
import Testing
import Wire

/// What a wire session does, driven in memory through ``SessionProbe`` (no sockets): answers and their order,
/// writes and server values, listens and queries, limits, auth, onDisconnect, conflation and closing.
@Suite("wire session")
struct WireSessionTests {
    // MARK: - Answers and their order

    @Test("a get answers the data at its location, null where there is none")
    func getAnswersData() throws {
        let probe = SessionProbe(try InMemoryGateway())
        #expect(probe.ask(1, "p", #"{"p":"/g","d":{"a":1}}"#) == "ok")
        probe.send(2, "g", #"{"p":"/g","q":{}}"#)
        #expect(probe.answer(2)?.data == .object([("a", .number(1))]))
        probe.send(3, "g", #"{"p":"/nothing","q":{}}"#)
        #expect(probe.answer(3)?.data == .null)
    }

    @Test("pipelined writes are answered in the order sent")
    func pipelinedWritesInOrder() throws {
        let probe = SessionProbe(try InMemoryGateway())
        for number in 1...50 { probe.send(number, "p", #"{"p":"/seq","d":\#(number)}"#) }
        #expect(eventually { probe.received.count == 51 })
        let numbers = probe.received.compactMap { message -> Int? in
            guard case .number(let r)? = message["d"]?["r"] else { return nil }
            return Int(r)
        }
        #expect(numbers == Array(1...50))
    }

    @Test("a merge writes each child and is pushed as a merge")
    func mergeWrites() throws {
        let probe = SessionProbe(try InMemoryGateway())
        #expect(probe.ask(1, "q", #"{"p":"/m","h":""}"#) == "ok")
        #expect(probe.ask(2, "m", #"{"p":"/m","d":{"a":1,"b/c":2}}"#) == "ok")
        let merges = probe.received.filter { $0["d"]?["a"] == .string("m") }
        #expect(merges.count == 1)
        probe.send(3, "g", #"{"p":"/m","q":{}}"#)
        #expect(probe.answer(3)?.data == .object([("a", .number(1)), ("b", .object([("c", .number(2))]))]))
    }

    @Test("a write with a stale hash gets datastale; with the current hash it is taken")
    func compareAndSet() throws {
        let probe = SessionProbe(try InMemoryGateway())
        #expect(probe.ask(1, "p", #"{"p":"/cas","d":1}"#) == "ok")
        #expect(probe.ask(2, "p", #"{"p":"/cas","d":2,"h":"wrong"}"#) == "datastale")
        let hash = Store.hash(of: try node("1"))
        #expect(probe.ask(3, "p", #"{"p":"/cas","d":3,"h":"\#(hash)"}"#) == "ok")
    }

    @Test("a server timestamp becomes the server's time; an increment adds to the current number")
    func serverValues() throws {
        let clock = ManualClock()
        let probe = SessionProbe(try InMemoryGateway { $0.clock = clock.read })
        #expect(probe.ask(1, "p", #"{"p":"/sv/t","d":{".sv":"timestamp"}}"#) == "ok")
        #expect(probe.ask(2, "p", #"{"p":"/sv/n","d":5}"#) == "ok")
        #expect(probe.ask(3, "p", #"{"p":"/sv/n","d":{".sv":{"increment":2}}}"#) == "ok")
        probe.send(4, "g", #"{"p":"/sv","q":{}}"#)
        let data = try #require(probe.answer(4)?.data)
        #expect(data["n"] == .number(7))
        #expect(data["t"] == .number(clock.read()))
        clock.advance(milliseconds: 90_000)
        #expect(probe.ask(5, "p", #"{"p":"/sv/t","d":{".sv":"timestamp"}}"#) == "ok")
        probe.send(6, "g", #"{"p":"/sv/t","q":{}}"#)
        #expect(probe.answer(6)?.data == .number(clock.read()))
    }

    @Test("stats are acknowledged")
    func statsAcknowledged() throws {
        let probe = SessionProbe(try InMemoryGateway())
        #expect(probe.ask(1, "s", #"{"c":{"sdk.js.10-4-0":1}}"#) == "ok")
    }

    @Test("an unknown action is answered invalid_request and the session goes on")
    func unknownAction() throws {
        let probe = SessionProbe(try InMemoryGateway())
        #expect(probe.ask(1, "zz", "{}") == "invalid_request")
        #expect(probe.ask(2, "p", #"{"p":"/after","d":true}"#) == "ok")
    }

    @Test("a ping is answered with a pong; an unknown control type is ignored")
    func controls() throws {
        let probe = SessionProbe(try InMemoryGateway())
        probe.send(raw: #"{"t":"c","d":{"t":"zz","d":{}}}"#)
        probe.send(raw: #"{"t":"c","d":{"t":"p","d":{}}}"#)
        #expect(eventually { probe.controls == ["h", "o"] })
        #expect(probe.channel.channelEvents.isEmpty)
    }

    // MARK: - Listens

    @Test("a listen gets the data, then ok; later writes are pushed; after unlisten nothing more")
    func listenLifecycle() throws {
        let probe = SessionProbe(try InMemoryGateway())
        #expect(probe.ask(1, "p", #"{"p":"/l","d":"a"}"#) == "ok")
        #expect(probe.ask(2, "q", #"{"p":"/l","h":""}"#) == "ok")
        #expect(probe.ask(3, "p", #"{"p":"/l","d":"b"}"#) == "ok")
        #expect(probe.ask(4, "n", #"{"p":"/l"}"#) == "ok")
        #expect(probe.ask(5, "p", #"{"p":"/l","d":"c"}"#) == "ok")
        #expect(probe.pushes.map(\.data) == [.string("a"), .string("b")])
    }

    @Test("a listen whose hash matches the data gets no data push, only ok")
    func listenWithMatchingHash() throws {
        let probe = SessionProbe(try InMemoryGateway())
        #expect(probe.ask(1, "p", #"{"p":"/h","d":{"x":1}}"#) == "ok")
        let hash = Store.hash(of: try node(#"{"x":1}"#))
        #expect(probe.ask(2, "q", #"{"p":"/h","h":"\#(hash)"}"#) == "ok")
        #expect(probe.pushes.isEmpty)
    }

    @Test("a tagged query listen gets its window with its tag")
    func taggedQuery() throws {
        let probe = SessionProbe(try InMemoryGateway())
        #expect(probe.ask(1, "p", #"{"p":"/q","d":{"a":1,"b":2,"c":3}}"#) == "ok")
        #expect(probe.ask(2, "q", #"{"p":"/q","q":{"l":2,"vf":"r"},"t":7,"h":""}"#) == "ok")
        let push = try #require(probe.pushes.last)
        #expect(push.tag == 7)
        #expect(push.data == .object([("b", .number(2)), ("c", .number(3))]))
    }

    @Test("another session's write reaches this session's listen")
    func fanOutBetweenSessions() throws {
        let memory = try InMemoryGateway()
        let listener = SessionProbe(memory)
        let writer = SessionProbe(memory)
        #expect(listener.ask(1, "q", #"{"p":"/f","h":""}"#) == "ok")
        #expect(writer.ask(1, "p", #"{"p":"/f/x","d":42}"#) == "ok")
        #expect(eventually { listener.pushes.contains { $0.path == "f/x" || $0.path == "/f/x" } })
    }

    @Test("listens past the limit get limit_exceeded; listening again at the same place is not a new one")
    func listenLimit() throws {
        let probe = SessionProbe(try InMemoryGateway { $0.maxListensPerConnection = 2 })
        #expect(probe.ask(1, "q", #"{"p":"/a","h":""}"#) == "ok")
        #expect(probe.ask(2, "q", #"{"p":"/b","h":""}"#) == "ok")
        #expect(probe.ask(3, "q", #"{"p":"/c","h":""}"#) == "limit_exceeded")
        #expect(probe.ask(4, "q", #"{"p":"/a","h":""}"#) == "ok")
        #expect(probe.ask(5, "n", #"{"p":"/b"}"#) == "ok")
        #expect(probe.ask(6, "q", #"{"p":"/c","h":""}"#) == "ok")
    }

    @Test("listens are counted while held and uncounted when the session ends")
    func listenGauge() throws {
        let memory = try InMemoryGateway()
        let probe = SessionProbe(memory)
        let before = memory.gateway.sessions.listenCount
        #expect(probe.ask(1, "q", #"{"p":"/g1","h":""}"#) == "ok")
        #expect(probe.ask(2, "q", #"{"p":"/g2","h":""}"#) == "ok")
        #expect(memory.gateway.sessions.listenCount == before + 2)
        probe.close()
        #expect(memory.gateway.sessions.listenCount == before)
    }

    @Test("a get with a query answers the query's window")
    func getWithQuery() throws {
        let probe = SessionProbe(try InMemoryGateway())
        #expect(probe.ask(1, "p", #"{"p":"/w","d":{"a":1,"b":2,"c":3}}"#) == "ok")
        probe.send(2, "g", #"{"p":"/w","q":{"l":1,"vf":"l"}}"#)
        #expect(probe.answer(2)?.data == .object([("a", .number(1))]))
    }

    @Test("unlistening from a location never listened to is still answered ok")
    func unlistenUnknown() throws {
        let probe = SessionProbe(try InMemoryGateway())
        #expect(probe.ask(1, "n", #"{"p":"/never"}"#) == "ok")
    }

    @Test("a write is pushed to the writer's own listen before the writer's ok")
    func ownEchoBeforeOK() throws {
        let probe = SessionProbe(try InMemoryGateway())
        #expect(probe.ask(1, "q", #"{"p":"/echo","h":""}"#) == "ok")
        #expect(probe.ask(2, "p", #"{"p":"/echo","d":"mine"}"#) == "ok")
        let messages = probe.received
        let push = try #require(messages.firstIndex { $0["d"]?["b"]?["d"] == .string("mine") })
        let ok = try #require(messages.firstIndex { $0["d"]?["r"] == .number(2) })
        #expect(push < ok)
    }

    @Test("two listens on nested locations each get every change in the same order")
    func nestedListensSameOrder() throws {
        let probe = SessionProbe(try InMemoryGateway())
        #expect(probe.ask(1, "q", #"{"p":"/n","h":""}"#) == "ok")
        #expect(probe.ask(2, "q", #"{"p":"/n/x","h":""}"#) == "ok")
        for number in 3...12 { probe.send(number, "p", #"{"p":"/n/x","d":\#(number)}"#) }
        #expect(probe.answer(12)?.status == "ok")
        // Both views push each change at the changed location: every value twice, never out of order.
        let values = probe.pushes.filter { $0.path.hasSuffix("n/x") }.compactMap { push -> Double? in
            if case .number(let value) = push.data { return value }
            return nil
        }
        #expect(values == (3...12).flatMap { [Double($0), Double($0)] })
    }

    @Test("a write too deep for the data model is refused and the session goes on")
    func tooDeepRefused() throws {
        let probe = SessionProbe(try InMemoryGateway())
        let deep = String(repeating: #"{"a":"#, count: 40) + "1" + String(repeating: "}", count: 40)
        #expect(probe.ask(1, "p", #"{"p":"/deep","d":\#(deep)}"#) == "invalid_request")
        #expect(probe.ask(2, "p", #"{"p":"/shallow","d":1}"#) == "ok")
    }

    @Test("a request with a malformed body is answered invalid_request and the session goes on")
    func malformedRequestBody() throws {
        let probe = SessionProbe(try InMemoryGateway())
        #expect(probe.ask(1, "p", #"{"d":1}"#) == "invalid_request")
        #expect(probe.ask(2, "p", #"{"p":"/ok","d":1}"#) == "ok")
    }

    // MARK: - Rules

    private static let rules = """
        {"rules": {"open": {".read": true, ".write": true}, "mine": {"$uid": {".read": "auth.uid == $uid",
        ".write": "auth.uid == $uid"}}, "checked": {".write": true, ".validate": "newData.isNumber()"}}}
        """

    @Test("a denied listen, get and write get permission_denied and no data")
    func deniedOperations() throws {
        let probe = SessionProbe(try InMemoryGateway(rules: Self.rules))
        #expect(probe.ask(1, "q", #"{"p":"/mine/alice","h":""}"#) == "permission_denied")
        #expect(probe.ask(2, "g", #"{"p":"/mine/alice","q":{}}"#) == "permission_denied")
        #expect(probe.ask(3, "p", #"{"p":"/mine/alice","d":1}"#) == "permission_denied")
        #expect(probe.ask(4, "p", #"{"p":"/open/x","d":1}"#) == "ok")
        #expect(probe.pushes.isEmpty)
    }

    @Test(".validate refuses data of the wrong shape")
    func validateRule() throws {
        let probe = SessionProbe(try InMemoryGateway(rules: Self.rules))
        #expect(probe.ask(1, "p", #"{"p":"/checked","d":"text"}"#) == "permission_denied")
        #expect(probe.ask(2, "p", #"{"p":"/checked","d":3}"#) == "ok")
    }

    @Test("the admin credential bypasses the rules")
    func adminBypass() throws {
        let probe = SessionProbe(try InMemoryGateway(rules: Self.rules))
        #expect(probe.ask(1, "auth", #"{"cred":"owner"}"#) == "ok")
        #expect(probe.ask(2, "p", #"{"p":"/mine/alice","d":1}"#) == "ok")
    }

    @Test("the admin credential is refused from another site's page")
    func adminRefusedCrossSite() throws {
        let probe = SessionProbe(try InMemoryGateway(rules: Self.rules), crossSite: true)
        #expect(probe.ask(1, "auth", #"{"cred":"owner"}"#) == "permission_denied")
        #expect(probe.ask(2, "p", #"{"p":"/mine/alice","d":1}"#) == "permission_denied")
    }

    @Test("unauth drops the admin identity and revokes the listens it needed")
    func unauthRevokes() throws {
        let probe = SessionProbe(try InMemoryGateway(rules: Self.rules))
        #expect(probe.ask(1, "auth", #"{"cred":"owner"}"#) == "ok")
        #expect(probe.ask(2, "q", #"{"p":"/mine/alice","h":""}"#) == "ok")
        #expect(probe.ask(3, "unauth", "{}") == "ok")
        #expect(eventually { probe.actions.contains("c") })
    }

    @Test("an invalid token is answered invalid_token and leaves the session unauthenticated")
    func invalidToken() throws {
        let probe = SessionProbe(try InMemoryGateway(rules: Self.rules))
        #expect(probe.ask(1, "auth", #"{"cred":"not.a.token"}"#) == "invalid_token")
        #expect(probe.ask(2, "p", #"{"p":"/mine/alice","d":1}"#) == "permission_denied")
    }

    @Test("auth attempts beyond the rate get limit_exceeded until the bucket refills")
    func authPacing() throws {
        let pacing = ManualNanoseconds()
        let probe = SessionProbe(try InMemoryGateway(pacing: pacing) {
            $0.maxAuthAttemptsPerSecond = 3
        })
        for number in 1...4 { probe.send(number, "auth", #"{"cred":"bad"}"#) }
        #expect(probe.answer(3)?.status == "invalid_token")
        #expect(probe.answer(4)?.status == "limit_exceeded")
        // A third of a second later, one token is back: one more attempt, then none.
        pacing.advance(nanoseconds: 334_000_000)
        probe.send(5, "auth", #"{"cred":"bad"}"#)
        probe.send(6, "auth", #"{"cred":"bad"}"#)
        #expect(probe.answer(5)?.status == "invalid_token")
        #expect(probe.answer(6)?.status == "limit_exceeded")
    }

    // MARK: - Outstanding requests

    @Test("requests already read past the outstanding limit get limit_exceeded")
    func outstandingLimit() throws {
        let probe = SessionProbe(try InMemoryGateway { $0.maxOutstandingRequestsPerConnection = 4 })
        // All read in one loop pass, before any answer: the fifth is past the limit.
        let session = probe.session
        probe.memory.onLoop {
            for number in 1...5 { session.receive(request(number, "p", #"{"p":"/o","d":\#(number)}"#)) }
        }
        #expect(probe.answer(5)?.status == "limit_exceeded")
        #expect(probe.answer(4)?.status == "ok")
    }

    // MARK: - onDisconnect

    @Test("an onDisconnect set runs when the session ends")
    func onDisconnectRuns() throws {
        let memory = try InMemoryGateway()
        let leaving = SessionProbe(memory)
        let watcher = SessionProbe(memory)
        #expect(leaving.ask(1, "o", #"{"p":"/presence/me","d":"gone"}"#) == "ok")
        #expect(watcher.ask(1, "q", #"{"p":"/presence","h":""}"#) == "ok")
        leaving.close()
        #expect(eventually { watcher.pushes.contains { $0.data == .string("gone") || $0.data["me"] == .string("gone") } })
    }

    @Test("a cancelled onDisconnect does not run")
    func onDisconnectCancelled() throws {
        let memory = try InMemoryGateway()
        let leaving = SessionProbe(memory)
        let other = SessionProbe(memory)
        #expect(leaving.ask(1, "o", #"{"p":"/c/me","d":"gone"}"#) == "ok")
        #expect(leaving.ask(2, "oc", #"{"p":"/c"}"#) == "ok")
        leaving.close()
        // A write after the close is sequenced after whatever the close ran.
        #expect(other.ask(1, "p", #"{"p":"/c/marker","d":1}"#) == "ok")
        other.send(2, "g", #"{"p":"/c","q":{}}"#)
        #expect(other.answer(2)?.data == .object([("marker", .number(1))]))
    }

    @Test("an onDisconnect merge writes each child when the session ends")
    func onDisconnectMerge() throws {
        let memory = try InMemoryGateway()
        let leaving = SessionProbe(memory)
        let other = SessionProbe(memory)
        #expect(leaving.ask(1, "om", #"{"p":"/om","d":{"a":1,"b":2}}"#) == "ok")
        leaving.close()
        var number = 100
        #expect(eventually {
            number += 1
            other.send(number, "g", #"{"p":"/om","q":{}}"#)
            return other.answer(number)?.data == .object([("a", .number(1)), ("b", .number(2))])
        })
    }

    @Test("onDisconnect locations past the limit get limit_exceeded")
    func onDisconnectLimit() throws {
        let probe = SessionProbe(try InMemoryGateway { $0.maxOnDisconnectPerConnection = 2 })
        #expect(probe.ask(1, "o", #"{"p":"/d/1","d":1}"#) == "ok")
        #expect(probe.ask(2, "o", #"{"p":"/d/2","d":1}"#) == "ok")
        #expect(probe.ask(3, "o", #"{"p":"/d/3","d":1}"#) == "limit_exceeded")
        #expect(probe.ask(4, "o", #"{"p":"/d/1","d":2}"#) == "ok")
    }

    @Test("a denied onDisconnect is refused when registered")
    func onDisconnectDenied() throws {
        let probe = SessionProbe(try InMemoryGateway(rules: Self.rules))
        #expect(probe.ask(1, "o", #"{"p":"/mine/alice","d":1}"#) == "permission_denied")
        #expect(probe.ask(2, "o", #"{"p":"/open/x","d":1}"#) == "ok")
    }

    @Test("an onDisconnect write that fails .validate is refused when registered")
    func onDisconnectValidated() throws {
        let probe = SessionProbe(try InMemoryGateway(rules: Self.rules))
        #expect(probe.ask(1, "o", #"{"p":"/checked","d":"text"}"#) == "permission_denied")
        #expect(probe.ask(2, "o", #"{"p":"/checked","d":7}"#) == "ok")
    }

    @Test("an onDisconnect priority is judged on the priority it would set, its increment added to the priority")
    func onDisconnectPriority() throws {
        let rules = """
            {"rules": {"ranked": {"$r": {".write": true,
              ".validate": "newData.getPriority() == null || newData.getPriority() < 10"}}}}
            """
        let probe = SessionProbe(try InMemoryGateway(rules: rules))
        #expect(probe.ask(1, "p", #"{"p":"/ranked/a","d":{".value":100,".priority":5}}"#) == "ok")
        // The value is 100 and the priority 5: an increment of the priority gives 6, which the rules allow.
        #expect(probe.ask(2, "o", #"{"p":"/ranked/a/.priority","d":{".sv":{"increment":1}}}"#) == "ok")
        #expect(probe.ask(3, "o", #"{"p":"/ranked/a/.priority","d":{".sv":{"increment":5}}}"#) == "permission_denied")
    }

    // MARK: - Backpressure and conflation

    @Test("a session behind its channel skips pushes, then gets the latest data once drained")
    func conflation() throws {
        let memory = try InMemoryGateway { $0.conflationThresholdBytes = 100 }
        let slow = SessionProbe(memory)
        let writer = SessionProbe(memory)
        #expect(slow.ask(1, "q", #"{"p":"/c","h":""}"#) == "ok")
        slow.channel.pendingOutboundBytes = 1_000
        for number in 1...20 { writer.send(number, "p", #"{"p":"/c","d":\#(number)}"#) }
        #expect(writer.answer(20)?.status == "ok")
        let pushed = slow.pushes.count
        #expect(pushed <= 2)
        slow.channel.pendingOutboundBytes = 0
        let session = slow.session
        memory.onLoop { session.drained() }
        #expect(eventually { slow.pushes.last?.data == .number(20) })
        #expect(slow.pushes.count == pushed + 1)
    }

    @Test("a conflated listen catches up before the session's next answer")
    func catchUpBeforeAnswer() throws {
        let memory = try InMemoryGateway { $0.conflationThresholdBytes = 100 }
        let slow = SessionProbe(memory)
        let writer = SessionProbe(memory)
        #expect(slow.ask(1, "q", #"{"p":"/k","h":""}"#) == "ok")
        slow.channel.pendingOutboundBytes = 1_000
        for number in 1...5 { writer.send(number, "p", #"{"p":"/k","d":\#(number)}"#) }
        #expect(writer.answer(5)?.status == "ok")
        #expect(slow.ask(2, "s", "{}") == "ok")
        let messages = slow.received
        let answer = try #require(messages.lastIndex { $0["d"]?["r"] == .number(2) })
        let latest = try #require(messages.lastIndex { $0["d"]?["b"]?["d"] == .number(5) })
        #expect(latest < answer)
    }

    // MARK: - Closing

    @Test("a message too large to assemble closes the session with 1009 after the error")
    func tooLargeCloses() throws {
        let probe = SessionProbe(try InMemoryGateway())
        let session = probe.session
        probe.memory.onLoop { session.receiveFailed(.messageTooLarge(limit: 10)) }
        #expect(probe.channel.channelEvents == ["close 1009"])
        #expect(probe.controls.last == "e")
    }

    @Test("an ended session leaves the directory")
    func endedSessionLeaves() throws {
        let memory = try InMemoryGateway()
        let probe = SessionProbe(memory)
        #expect(memory.gateway.sessions.session(withID: probe.session.sessionID) != nil)
        probe.close()
        #expect(memory.gateway.sessions.session(withID: probe.session.sessionID) == nil)
    }

    @Test("a client coming back with ls ends its previous session, whose onDisconnect runs")
    func lastSessionReplaces() throws {
        let memory = try InMemoryGateway()
        let first = SessionProbe(memory)
        #expect(first.ask(1, "o", #"{"p":"/ls","d":"old session ended"}"#) == "ok")
        let second = SessionProbe(memory, lastSessionID: first.session.sessionID)
        #expect(eventually { first.channel.channelEvents == ["close 1000"] })
        first.close()  // what the closed transport reports
        var number = 100
        #expect(eventually {
            number += 1
            second.send(number, "g", #"{"p":"/ls","q":{}}"#)
            return second.answer(number)?.data == .string("old session ended")
        })
    }

    @Test("the hello carries the server's time, the session id and the protocol version")
    func helloContents() throws {
        let clock = ManualClock()
        let probe = SessionProbe(try InMemoryGateway { $0.clock = clock.read })
        let hello = try #require(probe.received.first?["d"]?["d"])
        #expect(hello["ts"] == .number(clock.read()))
        #expect(hello["s"] == .string(probe.session.sessionID))
        #expect(hello["v"] == .string("5"))
        #expect(hello["h"] == .string("test"))
    }
}
