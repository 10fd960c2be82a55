import HTTP1
import HTTPServer
import TestSupport
import Transport
import Testing

@Suite("HTTP/1.1 over real sockets", .serialized)
struct HTTPServerTests {
    @Test("GET /.health answers while the server runs")
    func health() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        try client.send("GET /.health HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text.contains("ok"))
    }

    @Test("pipelined requests are answered in order on one connection")
    func pipelining() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        try client.send(
            "POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\none"
                + "POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\ntwo"
                + "GET /.health HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "one")
        #expect(try client.readResponse().text == "two")
        #expect(try client.readResponse().status == 200)
    }

    @Test("a chunked body is reassembled")
    func chunkedBody() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        try client.send(
            "POST /body HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "hello world")
    }

    @Test("Expect: 100-continue gets an interim response before the body")
    func expectContinue() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        try client.send("POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n")
        #expect(try client.readResponse().status == 100)
        try client.send("hi")
        #expect(try client.readResponse().text == "hi")
    }

    @Test(
        "malformed or over-limit requests get the right status and a JSON body",
        arguments: [
            ("GARBAGE\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nBad Header: x\r\n\r\n", 400),
            ("POST /body HTTP/1.1\r\nHost: x\r\n\r\n", 411),
            ("POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n", 413),
            ("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\n\r\n", 414),
            ("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "b", count: 20000) + "\r\n\r\n", 431),
            ("POST /body HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
            ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        ])
    func errorStatuses(request: String, status: Int) throws {
        let server = try TestServer { $0.httpLimits.maxBodyBytes = 1024 * 1024 }
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        try client.send(request)
        let response = try client.readResponse()
        #expect(response.status == status)
        #expect(response.headers["content-type"]?.contains("json") == true)
        #expect(response.text.hasPrefix("{"))
    }

    @Test("routing errors (404, 405) keep the connection open")
    func routingErrorsKeepAlive() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        try client.send("DELETE /get-only HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().status == 405)
        try client.send("GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().status == 404)
        try client.send("GET /get-only HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().status == 200)
    }

    @Test("a peer that never finishes its request head is cut off (slowloris)")
    func slowloris() throws {
        let server = try TestServer { $0.handshakeTimeoutSeconds = 0.5 }
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        try client.send("GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        #expect(client.waitForClose())
        #expect(server.server.metrics.closedByReason["handshake_timeout"]?.load == 1)
    }

    @Test("peers beyond the connection limit get 503")
    func maxConnections() throws {
        let server = try TestServer { $0.maxConnections = 2 }
        defer { server.stop() }
        let first = try RawClient(port: server.port)
        let second = try RawClient(port: server.port)
        for client in [first, second] {
            try client.send("GET /.health HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().status == 200)
        }
        let third = try RawClient(port: server.port)
        #expect(try third.readResponse().status == 503)
        #expect(server.server.refusedConnections == 1)
    }
}
