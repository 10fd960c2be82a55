import HTTP1
import Testing

@Suite("HTTPRequestParser: bodies, framing and 100-continue")
struct HTTPRequestParserBodyTests {
    // MARK: - Content-Length

    @Test("a Content-Length body is read exactly")
    func contentLengthBody() throws {
        let run = dripFeed("PUT /a.json HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n{\"a\":true}\n")
        let request = try #require(requests(run).first)
        #expect(request.body == bytes("{\"a\":true}\n"))
        #expect(run.unparsed.isEmpty)
    }

    @Test("repeated or listed Content-Length is accepted when all values agree (RFC 9112 §6.3)")
    func agreeingContentLengths() throws {
        let run = dripFeed("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3, 3\r\nContent-Length: 003\r\n\r\nabc")
        #expect(try #require(requests(run).first).body == bytes("abc"))
    }

    @Test("Content-Length: 0 and methods without a body need no length")
    func emptyBodies() {
        #expect(requests(dripFeed("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")).count == 1)
        #expect(requests(dripFeed("DELETE /a HTTP/1.1\r\nHost: h\r\n\r\n")).count == 1)
        #expect(requests(dripFeed("GET /a HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nab")).first?.body == bytes("ab"))
    }

    @Test("invalid or conflicting Content-Length is 400", arguments: [
        ("Content-Length: 3, 4", "conflicting Content-Length values"),
        ("Content-Length: 3\r\nContent-Length: 4", "conflicting Content-Length values"),
        ("Content-Length: 99999999999999999999999, 1", "conflicting Content-Length values"),
        ("Content-Length: +3", "invalid Content-Length"),
        ("Content-Length: -1", "invalid Content-Length"),
        ("Content-Length: 3 4", "invalid Content-Length"),
        ("Content-Length: 0x10", "invalid Content-Length"),
        ("Content-Length:", "invalid Content-Length"),
        ("Content-Length: 3,", "invalid Content-Length"),
    ])
    func invalidContentLength(field: String, reason: String) {
        let run = dripFeed("POST / HTTP/1.1\r\nHost: h\r\n\(field)\r\n\r\nabc")
        #expect(failure(run) == .badRequest(reason))
    }

    @Test("a declared body over the limit is 413 at once, without waiting for the body", arguments: [
        "11", "99999999999999999999999999",
    ])
    func declaredBodyTooLarge(length: String) {
        var parser = HTTPRequestParser(limits: HTTPLimits(maxBodyBytes: 10))
        parser.feed(bytes("POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: \(length)\r\n\r\n"))
        #expect(parser.next() == .failure(.payloadTooLarge))
        #expect(HTTPParseError.payloadTooLarge.status == .payloadTooLarge)
    }

    @Test("a body exactly at the limit is accepted")
    func bodyAtLimit() {
        let limits = HTTPLimits(maxBodyBytes: 10)
        let run = dripFeed("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n0123456789", limits: limits)
        #expect(requests(run).first?.body.count == 10)
    }

    @Test("POST, PUT and PATCH without a length are 411", arguments: ["POST", "PUT", "PATCH"])
    func lengthRequired(method: String) {
        let run = dripFeed("\(method) /a.json HTTP/1.1\r\nHost: h\r\n\r\n{}")
        #expect(failure(run) == .lengthRequired)
        #expect(failure(run)?.status == .lengthRequired)
    }

    // MARK: - chunked

    @Test("a chunked body is decoded, ignoring chunk extensions and discarding trailers")
    func chunkedBody() throws {
        let input = "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5\r\nhello\r\n"
            + "6;name=value;flag\r\n, worl\r\n"
            + "0001 ; ext=\"quoted\"\r\nd\r\n"
            + "0\r\nX-Trailer: t\r\nX-Other: u\r\n\r\n"
        let run = dripFeed(input)
        let request = try #require(requests(run).first)
        #expect(request.body == bytes("hello, world"))
        #expect(request.head.headers["x-trailer"] == nil)
        #expect(run.unparsed.isEmpty)
    }

    @Test("chunk sizes are hexadecimal in either case")
    func hexChunkSizes() throws {
        let payload = String(repeating: "x", count: 0x1A)
        let input = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n1a\r\n\(payload)\r\n1A\r\n\(payload)\r\n0\r\n\r\n"
        #expect(try #require(requests(dripFeed(input)).first).body.count == 0x34)
    }

    @Test("malformed chunked framing is 400", arguments: [
        ("x\r\nab\r\n0\r\n\r\n", "invalid chunk size"),
        ("\r\n", "invalid chunk size"),
        ("2 \r\nab\r\n0\r\n\r\n", "invalid chunk size"),
        ("2x\r\nab\r\n0\r\n\r\n", "invalid chunk size"),
        ("2;a\u{1}\r\nab\r\n0\r\n\r\n", "invalid chunk extension"),
        ("2\r\nabc\r\n0\r\n\r\n", "chunk data not followed by CRLF"),
        ("2\r\nab\rx0\r\n\r\n", "chunk data not followed by CRLF"),
        ("2\nab\r\n0\r\n\r\n", "line ends with a bare LF instead of CRLF"),
        ("0\r\nbad trailer\r\n\r\n", "header field without a colon"),
        ("0\r\n folded: x\r\n\r\n", "obsolete line folding in header fields"),
    ])
    func badChunkedFraming(chunks: String, reason: String) {
        let run = dripFeed("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks)
        #expect(failure(run) == .badRequest(reason))
    }

    @Test("a chunk-size line longer than 4 KiB is 400")
    func chunkSizeLineTooLong() {
        let ext = String(repeating: "e", count: 4096)
        let run = dripFeed("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1;\(ext)\r\na\r\n0\r\n\r\n")
        #expect(failure(run) == .badRequest("chunk size line too long"))
    }

    @Test("chunks adding up to more than the body limit are 413 when the size line arrives", arguments: [
        "b", "6\r\nabcdef\r\n5", "FFFFFFFFFFFFFFFFFFFFFFFF",
    ])
    func chunkedBodyTooLarge(sizes: String) {
        var parser = HTTPRequestParser(limits: HTTPLimits(maxBodyBytes: 10))
        parser.feed(bytes("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n\(sizes)\r\n"))
        #expect(parser.next() == .failure(.payloadTooLarge))
    }

    @Test("trailers over the header byte limit are 431")
    func trailersTooLarge() {
        let limits = HTTPLimits(maxHeaderBytes: 64)
        let trailer = "X: " + String(repeating: "t", count: 70)
        let run = dripFeed(
            "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\(trailer)\r\n\r\n", limits: limits)
        #expect(failure(run) == .headersTooLarge)
    }

    @Test("transfer codings other than chunked are 501", arguments: [
        "gzip", "gzip, chunked", "chunked, gzip", "identity",
    ])
    func unsupportedTransferCoding(coding: String) {
        let run = dripFeed("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: \(coding)\r\n\r\n0\r\n\r\n")
        #expect(failure(run) == .notImplemented("only the chunked transfer coding is supported"))
        #expect(failure(run)?.status == .notImplemented)
    }

    @Test("ambiguous framing is refused with 400 (RFC 9112 §6.1, §6.3)", arguments: [
        ("HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked", "both Content-Length and Transfer-Encoding"),
        ("HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 5", "both Content-Length and Transfer-Encoding"),
        ("HTTP/1.0\r\nTransfer-Encoding: chunked", "Transfer-Encoding is not allowed in HTTP/1.0"),
        ("HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked", "chunked applied more than once"),
        ("HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked", "chunked applied more than once"),
        ("HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: ,", "empty Transfer-Encoding"),
    ])
    func ambiguousFraming(versionAndFields: String, reason: String) {
        let run = dripFeed("POST / \(versionAndFields)\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        #expect(failure(run) == .badRequest(reason))
    }

    // MARK: - 100-continue

    @Test("Expect: 100-continue yields the head first, then the request once the body arrives")
    func expectContinue() {
        let head = "PUT /a.json HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 4\r\n\r\n"
        var parser = HTTPRequestParser()
        parser.feed(bytes(head))
        let event = parser.next()
        guard case .expectContinue(let expectedHead)? = event else {
            Issue.record("expected .expectContinue, got \(String(describing: event))")
            return
        }
        #expect(expectedHead.path == "/a.json")
        #expect(parser.next() == nil)
        parser.feed(bytes("true"))
        #expect(parser.next() == .request(HTTPRequest(head: expectedHead, body: bytes("true"))))

        let run = dripFeed(head + "true")
        #expect(run.events == [.expectContinue(expectedHead), .request(HTTPRequest(head: expectedHead, body: bytes("true")))])
    }

    @Test("Expect: 100-continue on a chunked body yields the head first")
    func expectContinueChunked() {
        let run = dripFeed("POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n")
        #expect(run.events.count == 2)
        guard case .expectContinue = run.events.first else {
            Issue.record("expected .expectContinue first, got \(run.events)")
            return
        }
    }

    @Test("no 100-continue event without a pending body, or in HTTP/1.0 (RFC 9110 §10.1.1)", arguments: [
        "POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n",
        "POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx",
    ])
    func noExpectContinue(input: String) {
        let run = dripFeed(input)
        #expect(run.events.count == 1)
        #expect(requests(run).count == 1)
    }
}
