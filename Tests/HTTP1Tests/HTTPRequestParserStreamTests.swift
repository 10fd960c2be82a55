import HTTP1
import Testing

@Suite("HTTPRequestParser: pipelining, upgrades and the parser's lifecycle")
struct HTTPRequestParserStreamTests {
    @Test("three pipelined requests in one feed come out one by one, consuming nothing beyond each")
    func pipelining() throws {
        let first = "GET /1 HTTP/1.1\r\nHost: h\r\n\r\n"
        let second = "POST /2 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
        let third = "PUT /3 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nde\r\n0\r\n\r\n"
        var parser = HTTPRequestParser()
        parser.feed(bytes(first + second + third))
        guard case .request(let one)? = parser.next() else { throw Failure("first request missing") }
        #expect(one.head.path == "/1")
        guard case .request(let two)? = parser.next() else { throw Failure("second request missing") }
        #expect(two.head.path == "/2")
        #expect(two.body == bytes("abc"))
        guard case .request(let three)? = parser.next() else { throw Failure("third request missing") }
        #expect(three.head.path == "/3")
        #expect(three.body == bytes("de"))
        #expect(parser.next() == nil)
        #expect(!parser.hasPartialRequest)

        let run = dripFeed(first + second + third)
        #expect(requests(run).map(\.head.path) == ["/1", "/2", "/3"])
    }

    @Test("bytes after an upgrade request stay unparsed for the next protocol")
    func unparsedBytesAfterUpgrade() throws {
        let upgrade = "GET /.ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        let frame: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]  // masked "Hello"
        let run = dripFeed(bytes(upgrade) + frame, stopAfterRequests: 1)
        let request = try #require(requests(run).first)
        #expect(request.head.headers.containsToken("upgrade", in: "connection"))
        #expect(run.unparsed == frame)
    }

    @Test("after a failure the parser stays failed and ignores further input")
    func staysFailed() {
        var parser = HTTPRequestParser()
        parser.feed(bytes("GET / HTTP/9.9\r\nHost: h\r\n\r\n"))
        #expect(parser.next() == .failure(.versionNotSupported))
        #expect(parser.next() == nil)
        parser.feed(bytes("GET / HTTP/1.1\r\nHost: h\r\n\r\n"))
        #expect(parser.next() == nil)
        #expect(parser.takeUnparsedBytes().isEmpty)
        #expect(!parser.hasPartialRequest)
    }

    @Test("a request after a failed one in the same feed is never returned")
    func failureHidesLaterRequests() {
        let run = dripFeed("GET / HTTP/1.1\r\nHost: h\r\nBad Field: x\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(run.events == [.failure(.badRequest("invalid header field name"))])
    }

    @Test("hasPartialRequest tells an idle connection from a request under way")
    func partialRequest() {
        var parser = HTTPRequestParser()
        #expect(!parser.hasPartialRequest)
        parser.feed(bytes("\r\n"))
        #expect(parser.next() == nil)
        #expect(parser.hasPartialRequest)
        parser.feed(bytes("GET / HTTP/1.1\r\nHost: h\r\n\r\nPOST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\na"))
        guard case .request? = parser.next() else {
            Issue.record("expected the GET")
            return
        }
        #expect(parser.hasPartialRequest)
        #expect(parser.next() == nil)
        #expect(parser.hasPartialRequest)
        parser.feed(bytes("b"))
        guard case .request? = parser.next() else {
            Issue.record("expected the POST")
            return
        }
        #expect(!parser.hasPartialRequest)
    }

    @Test("two thousand requests fed one after another all come out and leave nothing behind")
    func manyRequests() {
        var parser = HTTPRequestParser()
        let one = bytes("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello")
        var count = 0
        for _ in 0..<2000 {
            parser.feed(one)
            while case .request(let request)? = parser.next() {
                #expect(request.body == bytes("hello"))
                count += 1
            }
        }
        #expect(count == 2000)
        #expect(parser.takeUnparsedBytes().isEmpty)
    }

    // MARK: - keep-alive

    @Test("keep-alive follows RFC 9112 §9.3", arguments: [
        ("HTTP/1.1", "", true),
        ("HTTP/1.1", "Connection: close\r\n", false),
        ("HTTP/1.1", "Connection: Keep-Alive, CLOSE\r\n", false),
        ("HTTP/1.1", "Connection: upgrade\r\nConnection: close\r\n", false),
        ("HTTP/1.1", "Connection: keep-alive\r\n", true),
        ("HTTP/1.0", "", false),
        ("HTTP/1.0", "Connection: keep-alive\r\n", true),
        ("HTTP/1.0", "Connection: Keep-Alive\r\n", true),
        ("HTTP/1.0", "Connection: keep-alive, close\r\n", false),
    ])
    func keepAlive(version: String, fields: String, expected: Bool) throws {
        let head = try #require(requests(dripFeed("GET / \(version)\r\nHost: h\r\n\(fields)\r\n")).first).head
        #expect(head.keepAlive == expected)
    }
}

/// A test failure thrown to stop a test early with a message.
struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
