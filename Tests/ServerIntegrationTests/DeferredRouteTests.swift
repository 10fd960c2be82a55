import Dispatch
import Foundation
import HTTPServer
import Synchronization
import TestSupport
import Testing

@Suite("Deferred answers (.deferred routes) over real sockets", .serialized)
struct DeferredRouteTests {
    private static func get(_ target: String, close: Bool = false) -> String {
        "GET \(target) HTTP/1.1\r\nHost: x\r\n" + (close ? "Connection: close\r\n" : "") + "\r\n"
    }

    @Test("pipelined deferred and immediate answers leave in request order, however the deferred ones complete")
    func pipelinedOrder() throws {
        let router = DeferredTestRouter()
        let server = try TestServer(router: router)
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        var random = SplitMix64(seed: 7)
        var requests = ""
        var ids: [String] = []
        for index in 0..<40 {
            let id = "r\(index)"
            ids.append(id)
            switch random.pick(["later", "later", "inline", "now"]) {
            case "later": requests += Self.get("/later?id=\(id)&delay=\(Int.random(in: 0...15, using: &random))")
            case "inline": requests += Self.get("/inline?id=\(id)")
            default: requests += Self.get("/now?id=\(id)")
            }
        }
        try client.send(requests)
        var answered: [String] = []
        for _ in ids {
            let response = try client.readResponse()
            #expect(response.status == 200)
            answered.append(response.text)
        }
        #expect(answered == ids)
        #expect(router.routedIDs == ids)
    }

    @Test("many requests answered inline on the loop are all sent, in order")
    func inlineAnswers() throws {
        let server = try TestServer(router: DeferredTestRouter())
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        let ids = (0..<500).map { "i\($0)" }
        try client.send(ids.map { Self.get("/inline?id=\($0)") }.joined())
        for id in ids {
            #expect(try client.readResponse().text == id)
        }
    }

    @Test("answers held by the application and completed out of order on other threads reach their own connections in order")
    func heldOutOfOrder() throws {
        let router = DeferredTestRouter()
        let server = try TestServer(router: router)
        defer { server.stop() }
        let first = try RawClient(port: server.port)
        let second = try RawClient(port: server.port)
        try first.send(Self.get("/hold?id=a1") + Self.get("/now?id=a2") + Self.get("/hold?id=a3"))
        try second.send(Self.get("/hold?id=b1"))
        let a1 = try #require(router.held("a1"))
        let b1 = try #require(router.held("b1"))
        // Requests pipelined behind an outstanding answer wait: nothing after a1 has been routed yet.
        #expect(!router.routedIDs.contains("a2") && !router.routedIDs.contains("a3"))

        DispatchQueue.global().async { b1.respond(DeferredTestRouter.answer("b1")) }
        #expect(try second.readResponse().text == "b1")
        DispatchQueue.global().async { a1.respond(DeferredTestRouter.answer("a1")) }
        #expect(try first.readResponse().text == "a1")
        #expect(try first.readResponse().text == "a2")
        let a3 = try #require(router.held("a3"))
        DispatchQueue.global().async { a3.respond(DeferredTestRouter.answer("a3")) }
        #expect(try first.readResponse().text == "a3")
        #expect(router.routedIDs.filter { $0.hasPrefix("a") } == ["a1", "a2", "a3"])
    }

    @Test("connections whose deferred answers complete concurrently each get their own answers in order")
    func concurrentConnections() throws {
        let server = try TestServer(router: DeferredTestRouter())
        defer { server.stop() }
        let port = server.port
        let failures = Failures()
        let done = DispatchGroup()
        for connection in 0..<8 {
            done.enter()
            // One thread per client (blocking reads), so all eight wait on the server at once.
            Thread {
                defer { done.leave() }
                do {
                    let client = try RawClient(port: port)
                    let ids = (0..<12).map { "c\(connection)-\($0)" }
                    // Later requests finish sooner, so the connections' answers complete interleaved.
                    try client.send(ids.enumerated().map { Self.get("/later?id=\($1)&delay=\(12 - $0)") }.joined())
                    for id in ids {
                        let body = try client.readResponse().text
                        if body != id { failures.add("connection \(connection): \(body) for \(id)") }
                    }
                } catch {
                    failures.add("connection \(connection): \(error)")
                }
            }.start()
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(failures.all == [])
    }

    @Test(
        "an answer completed twice is sent once; the next request gets its own answer",
        arguments: ["/twice", "/race"])
    func completedTwice(target: String) throws {
        let server = try TestServer(router: DeferredTestRouter())
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        try client.send(Self.get(target) + Self.get("/now?id=n1"))
        let first = try client.readResponse().text
        #expect(target == "/twice" ? first == "first" : ["one", "two"].contains(first))
        #expect(try client.readResponse().text == "n1")
        // A second answer to the first request would arrive before this one.
        try client.send(Self.get("/later?id=n2&delay=5") + Self.get("/now?id=n3"))
        #expect(try client.readResponse().text == "n2")
        #expect(try client.readResponse().text == "n3")
    }

    @Test("completing an answer after the client went away does nothing, and the server carries on")
    func completedAfterClose() throws {
        let router = DeferredTestRouter()
        let server = try TestServer(router: router)
        defer { server.stop() }
        do {
            let client = try RawClient(port: server.port)
            try client.send(Self.get("/hold?id=gone") + Self.get("/now?id=never"))
            _ = client  // closed when it goes out of scope
        }
        let pending = try #require(router.held("gone"))
        #expect(eventually { server.server.liveConnections == 0 })
        pending.respond(DeferredTestRouter.answer("gone"))
        pending.respond(DeferredTestRouter.answer("gone again"))
        #expect(!router.routedIDs.contains("never"))

        let client = try RawClient(port: server.port)
        try client.send(Self.get("/later?id=after&delay=1"))
        #expect(try client.readResponse().text == "after")
    }

    @Test(
        "a request that closes the connection gets its deferred answer, then the connection closes",
        arguments: [
            "GET /later?id=c&delay=10 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            "GET /later?id=c&delay=10 HTTP/1.0\r\nHost: x\r\n\r\n",
            "GET /inline?id=c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        ])
    func connectionClose(request: String) throws {
        let router = DeferredTestRouter()
        let server = try TestServer(router: router)
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        try client.send(request + Self.get("/now?id=ignored"))
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "c")
        #expect(response.headers["connection"]?.lowercased() == "close")
        #expect(try client.readSome().isEmpty)
        #expect(!router.routedIDs.contains("ignored"))
    }

    @Test(
        "an answer that takes longer than the handshake timeout is still delivered, with requests pipelined behind it",
        arguments: [false, true])
    func slowAnswerIsNotSlowloris(pipelined: Bool) throws {
        let router = DeferredTestRouter()
        let server = try TestServer(configure: { $0.handshakeTimeoutSeconds = 0.3 }, router: router)
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        try client.send(Self.get("/hold?id=slow") + (pipelined ? Self.get("/now?id=next") : ""))
        let pending = try #require(router.held("slow"))
        sleepMilliseconds(1200)  // several sweeps past the handshake deadline
        pending.respond(DeferredTestRouter.answer("slow"))
        let slow = try client.readResponse().text
        #expect(slow == "slow")
        if pipelined {
            let next = try client.readResponse().text
            #expect(next == "next")
        }
    }

    @Test("an answer that takes longer than the idle timeout is still delivered")
    func slowAnswerIsNotIdle() throws {
        let router = DeferredTestRouter()
        let server = try TestServer(configure: { $0.idleTimeoutSeconds = 0.3 }, router: router)
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        try client.send(Self.get("/hold?id=slow"))
        let pending = try #require(router.held("slow"))
        sleepMilliseconds(1200)  // several sweeps past the idle deadline
        pending.respond(DeferredTestRouter.answer("slow"))
        let slow = try client.readResponse().text
        #expect(slow == "slow")
    }
}

/// Problems found on client threads, collected for one expectation.
private final class Failures: Sendable {
    private let list = Mutex<[String]>([])

    func add(_ failure: String) { list.withLock { $0.append(failure) } }

    var all: [String] { list.withLock { $0 } }
}
