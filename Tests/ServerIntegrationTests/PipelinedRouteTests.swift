import Dispatch
import HTTPServer
import Transport
import TestSupport
import Testing

/// HTTP/1.1 pipelining with ``Route/ordered(_:_:)``: requests placed in one order are routed behind unanswered
/// ones, others wait for their answers, and answers always leave in request order.
@Suite("Pipelined answers (.ordered routes) over real sockets", .serialized)
struct PipelinedRouteTests {
    private static func get(_ target: String) -> String {
        "GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n"
    }

    @Test("requests of one order are routed behind unanswered ones, and answers leave in request order")
    func routedBehindInOrder() throws {
        let router = DeferredTestRouter()
        let server = try TestServer(router: router)
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        try client.send(Self.get("/ordered?id=o1&order=A") + Self.get("/ordered?id=o2&order=A")
                        + Self.get("/ahead?id=n3") + Self.get("/ordered?id=o4&order=A"))
        // Every one is routed while o1 is still unanswered.
        #expect(eventually { router.routedIDs == ["o1", "o2", "n3", "o4"] })
        let o1 = try #require(router.held("o1"))
        let o2 = try #require(router.held("o2"))
        let o4 = try #require(router.held("o4"))
        o4.respond(DeferredTestRouter.answer("o4"))
        o2.respond(DeferredTestRouter.answer("o2"))
        DispatchQueue.global().async { o1.respond(DeferredTestRouter.answer("o1")) }
        #expect(try client.readResponse().text == "o1")
        #expect(try client.readResponse().text == "o2")
        // The immediate answer behind them saw their order ahead, and waited its turn.
        #expect(try client.readResponse().text == "A")
        #expect(try client.readResponse().text == "o4")
    }

    @Test("a request of another order is started only once the answers ahead of it are sent")
    func anotherOrderWaits() throws {
        let router = DeferredTestRouter()
        let server = try TestServer(router: router)
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        try client.send(Self.get("/ordered?id=o1&order=A") + Self.get("/ordered?id=o2&order=B")
                        + Self.get("/ahead?id=n3"))
        #expect(eventually { router.routedIDs == ["o1", "o2"] })
        // o2 was routed, but its answer was not started: o1 of order A is still unanswered.
        #expect(!router.isHeld("o2"))
        let o1 = try #require(router.held("o1"))
        o1.respond(DeferredTestRouter.answer("o1"))
        #expect(try client.readResponse().text == "o1")
        let o2 = try #require(router.held("o2"))
        // n3 is routed behind o2 now, finding order B ahead.
        #expect(eventually { router.routedIDs == ["o1", "o2", "n3"] })
        o2.respond(DeferredTestRouter.answer("o2"))
        #expect(try client.readResponse().text == "o2")
        #expect(try client.readResponse().text == "B")
    }

    @Test("a route table's handler behind unanswered requests runs once they are answered, with none ahead")
    func tablesAreNotPipelined() throws {
        let router = DeferredTestRouter()
        let server = try TestServer(router: router)
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        try client.send(Self.get("/ordered?id=o1&order=A") + Self.get("/.table?id=t2") + Self.get("/ahead?id=n3"))
        let o1 = try #require(router.held("o1"))
        #expect(eventually { router.routedIDs == ["o1", "t2"] })
        o1.respond(DeferredTestRouter.answer("o1"))
        #expect(try client.readResponse().text == "o1")
        #expect(try client.readResponse().text == "-")
        #expect(try client.readResponse().text == "-")
        // Paths outside every entry's common prefix fall through to the router's own routes.
        try client.send(Self.get("/.other/x?id=x") + Self.get("/.tab?id=y"))
        #expect(try client.readResponse().text == "other")
        #expect(try client.readResponse().status == 404)
    }

    @Test("past the limit of unanswered requests the rest wait unread, then are all routed and answered in order")
    func limitOfUnanswered() throws {
        let router = DeferredTestRouter()
        let server = try TestServer(router: router)
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        let ids = (0..<100).map { "o\($0)" }
        try client.send(ids.map { Self.get("/ordered?id=\($0)&order=A") }.joined())
        #expect(eventually { router.routedIDs.count == 64 })
        let first = try (0..<64).map { index in try #require(router.held("o\(index)")) }
        #expect(router.routedIDs.count == 64)
        for (index, pending) in first.enumerated().reversed() { pending.respond(DeferredTestRouter.answer("o\(index)")) }
        #expect(eventually { router.routedIDs.count == 100 })
        for index in 64..<100 { try #require(router.held("o\(index)")).respond(DeferredTestRouter.answer("o\(index)")) }
        for id in ids {
            #expect(try client.readResponse().text == id)
        }
    }

    @Test("answers held behind an unanswered one stop the routing once they reach the outbound high-water mark")
    func heldAnswersAreBounded() throws {
        let router = DeferredTestRouter()
        let limits = OutboundLimits(lowWaterMark: 256 * 1024, highWaterMark: 1 << 20, hardLimit: 8 << 20)
        let server = try TestServer(configure: { $0.outboundLimits = limits }, router: router)
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        let size = 400 * 1024
        let bigs = (2...5).map { Self.get("/big?id=b\($0)&size=\(size)") }.joined()
        try client.send(Self.get("/ordered?id=o1&order=A") + bigs)
        let o1 = try #require(router.held("o1"))
        // Three answers of 400 KiB held behind o1 pass the 1 MiB mark: b5 is not routed until they leave.
        #expect(eventually { router.routedIDs == ["o1", "b2", "b3", "b4"] })
        #expect(router.routedIDs == ["o1", "b2", "b3", "b4"])
        o1.respond(DeferredTestRouter.answer("o1"))
        #expect(try client.readResponse().text == "o1")
        for _ in 2...5 { #expect(try client.readResponse().body.count == size) }
        #expect(router.routedIDs == ["o1", "b2", "b3", "b4", "b5"])
    }
}
