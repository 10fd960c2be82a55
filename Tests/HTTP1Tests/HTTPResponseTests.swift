import HTTP1
import Testing

@Suite struct HTTPResponseTests {
    /// The bytes as text, for readable expectations.
    func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test("a response is framed with Content-Length after the caller's fields")
    func encodedWithContentLength() {
        let response = HTTPResponse(status: .ok, headers: ["Content-Type": "text/plain"], body: bytes("hi"))
        #expect(text(response.encoded()) == "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi")
    }

    @Test("an empty body still gets Content-Length: 0")
    func emptyBody() {
        #expect(text(HTTPResponse(status: .notFound).encoded()) == "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
    }

    @Test("1xx and 204 responses carry no Content-Length (RFC 9110 §8.6)", arguments: [
        HTTPStatus.noContent, .switchingProtocols, .continue,
    ])
    func noContentLength(status: HTTPStatus) {
        let encoded = text(HTTPResponse(status: status, headers: ["X": "y"]).encoded())
        #expect(encoded == "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\nX: y\r\n\r\n")
    }

    @Test("a caller's own Content-Length or Transfer-Encoding is not duplicated")
    func callerFraming() {
        let own = HTTPResponse(status: .ok, headers: ["Content-Length": "5"], body: bytes("hello"))
        #expect(text(own.encoded()) == "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
        let chunked = HTTPResponse(status: .ok, headers: ["Transfer-Encoding": "chunked"], body: HTTPChunkedEncoding.lastChunk)
        #expect(text(chunked.encoded()) == "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    }

    @Test("CR, LF and NUL in fields are replaced so a value cannot split the response")
    func noResponseSplitting() {
        let response = HTTPResponse(status: .ok, headers: ["X-Echo": "a\r\nSet-Cookie: x=1\u{0}"])
        #expect(text(response.encoded()) == "HTTP/1.1 200 OK\r\nX-Echo: a  Set-Cookie: x=1 \r\nContent-Length: 0\r\n\r\n")
    }

    @Test("json responses set the content type")
    func json() {
        let response = HTTPResponse.json(status: .created, body: #"{"name":"-N1"}"#)
        #expect(response.headers["content-type"] == "application/json; charset=utf-8")
        #expect(response.body == bytes(#"{"name":"-N1"}"#))
        #expect(response.status == .created)
        #expect(HTTPResponse.json(body: [0x6E, 0x75, 0x6C, 0x6C]).status == .ok)
    }

    @Test("error bodies are {\"error\": message} with the message escaped as a JSON string", arguments: [
        ("plain", #"{"error":"plain"}"#),
        (#"quote " and backslash \"#, #"{"error":"quote \" and backslash \\"}"#),
        ("line\nbreak\ttab\r\u{8}\u{C}", #"{"error":"line\nbreak\ttab\r\b\f"}"#),
        ("ctl \u{0}\u{1}\u{1F}", #"{"error":"ctl \u0000\u0001\u001f"}"#),
        ("unicode é ✓ 🌲 / \u{7F}", "{\"error\":\"unicode é ✓ 🌲 / \u{7F}\"}"),
        ("separators \u{2028}\u{2029} €", #"{"error":"separators \u2028\u2029 €"}"#),
    ])
    func errorBody(message: String, body: String) {
        let response = HTTPResponse.error(.badRequest, message: message)
        #expect(text(response.body) == body)
        #expect(response.status == .badRequest)
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
    }

    @Test("a streaming head adds no framing")
    func responseHead() {
        let head = HTTPResponseHead(status: .ok, headers: ["Content-Type": "text/event-stream", "Transfer-Encoding": "chunked"])
        #expect(text(head.encoded()) == "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        #expect(text(HTTPResponseHead(status: .continue).encoded()) == "HTTP/1.1 100 Continue\r\n\r\n")
    }

    @Test("chunks are framed with a hexadecimal size, and an empty chunk is not written")
    func chunks() {
        #expect(text(HTTPChunkedEncoding.encodeChunk(bytes("hello"))) == "5\r\nhello\r\n")
        #expect(text(HTTPChunkedEncoding.encodeChunk([UInt8](repeating: 0x61, count: 300))).hasPrefix("12c\r\naaa"))
        #expect(HTTPChunkedEncoding.encodeChunk([UInt8]()).isEmpty)
        #expect(text(HTTPChunkedEncoding.lastChunk) == "0\r\n\r\n")
    }

    @Test("a chunked response written with these helpers parses back to the same body")
    func chunkedRoundTrip() throws {
        var wire = bytes("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
        wire += HTTPChunkedEncoding.encodeChunk(bytes("data: 1\n\n"))
        wire += HTTPChunkedEncoding.encodeChunk([UInt8](repeating: 0x7A, count: 1000))
        wire += HTTPChunkedEncoding.lastChunk
        let request = try #require(requests(dripFeed(wire)).first)
        #expect(request.body == bytes("data: 1\n\n") + [UInt8](repeating: 0x7A, count: 1000))
    }

    @Test("every parse error maps to its status and a message", arguments: [
        (HTTPParseError.badRequest("x"), 400, "x"),
        (.lengthRequired, 411, nil),
        (.payloadTooLarge, 413, nil),
        (.uriTooLong, 414, nil),
        (.headersTooLarge, 431, nil),
        (.notImplemented("y"), 501, "y"),
        (.versionNotSupported, 505, nil),
    ] as [(HTTPParseError, Int, String?)])
    func parseErrorStatus(error: HTTPParseError, code: Int, message: String?) {
        #expect(error.status.code == code)
        #expect(!error.message.isEmpty)
        if let message { #expect(error.message == message) }
        #expect(error.description.hasPrefix("\(code) "))
    }
}
