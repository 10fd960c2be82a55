import HTTP1
import Testing

@Suite("HTTPRequestParser: request line and header fields")
struct HTTPRequestParserHeadTests {
    @Test("a simple GET comes out as one request with its parts split")
    func simpleGet() throws {
        let run = dripFeed("GET /users/ada.json?print=pretty&x=1 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n")
        let request = try #require(requests(run).first)
        #expect(run.events.count == 1)
        #expect(request.head.method == "GET")
        #expect(request.head.target == "/users/ada.json?print=pretty&x=1")
        #expect(request.head.path == "/users/ada.json")
        #expect(request.head.query == "print=pretty&x=1")
        #expect(request.head.version == .http1_1)
        #expect(request.head.headers["host"] == "example.com")
        #expect(request.head.headers.count == 2)
        #expect(request.body.isEmpty)
        #expect(run.unparsed.isEmpty)
    }

    @Test("the target is kept raw: no percent-decoding, quotes allowed, empty query distinct from none")
    func rawTarget() throws {
        let run = dripFeed("GET /a%20b.json?orderBy=\"$key\"&startAt=\"x\" HTTP/1.1\r\nHost: h\r\n\r\n")
        let head = try #require(requests(run).first).head
        #expect(head.path == "/a%20b.json")
        #expect(head.query == "orderBy=\"$key\"&startAt=\"x\"")
        let empty = try #require(requests(dripFeed("GET /a? HTTP/1.1\r\nHost: h\r\n\r\n")).first).head
        #expect(empty.path == "/a")
        #expect(empty.query == "")
    }

    @Test("absolute-form, asterisk-form and CONNECT's authority-form targets", arguments: [
        ("GET http://example.com/a/b?c=d HTTP/1.1", "/a/b", "c=d"),
        ("GET http://example.com HTTP/1.1", "/", nil),
        ("GET https://example.com?q HTTP/1.1", "/", "q"),
        ("OPTIONS * HTTP/1.1", "*", nil),
        ("CONNECT example.com:443 HTTP/1.1", "example.com:443", nil),
    ] as [(String, String, String?)])
    func targetForms(line: String, path: String, query: String?) throws {
        let head = try #require(requests(dripFeed(line + "\r\nHost: example.com\r\n\r\n")).first).head
        #expect(head.path == path)
        #expect(head.query == query)
    }

    @Test("an unknown but well-formed method is passed on for the router to refuse")
    func unknownMethodIsARequest() throws {
        let head = try #require(requests(dripFeed("BREW /pot HTTP/1.1\r\nHost: h\r\n\r\n")).first).head
        #expect(head.method == "BREW")
    }

    @Test("empty lines before a request line are skipped (RFC 9112 §2.2)")
    func leadingEmptyLines() throws {
        let run = dripFeed("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(requests(run).count == 1)
    }

    @Test("HTTP/1.0 is accepted and needs no Host")
    func http10() throws {
        let head = try #require(requests(dripFeed("GET / HTTP/1.0\r\n\r\n")).first).head
        #expect(head.version == .http1_0)
    }

    @Test("field values are trimmed of optional whitespace but keep inner spaces and obs-text")
    func fieldValueTrimming() throws {
        var input = bytes("GET / HTTP/1.1\r\nHost: h\r\nX-A: \t one  two \t\r\nX-Empty:\r\nX-Latin: caf")
        input += [0xE9] + bytes("\r\n\r\n")
        let headers = try #require(requests(dripFeed(input)).first).head.headers
        #expect(headers["x-a"] == "one  two")
        #expect(headers["X-EMPTY"] == "")
        #expect(headers["x-latin"] == "caf\u{FFFD}")
    }

    @Test("repeated fields keep their order and names are looked up without case")
    func repeatedFields() throws {
        let run = dripFeed("GET / HTTP/1.1\r\nHost: h\r\nX-Tag: a\r\nx-tag: b\r\nX-TAG: c\r\n\r\n")
        let headers = try #require(requests(run).first).head.headers
        #expect(headers.values(for: "X-Tag") == ["a", "b", "c"])
        #expect(headers["x-tag"] == "a")
        #expect(headers.map(\.name) == ["Host", "X-Tag", "x-tag", "X-TAG"])
    }

    // MARK: - 400

    @Test("malformed request lines and fields are 400 Bad Request", arguments: [
        ("G(T / HTTP/1.1\r\nHost: h\r\n\r\n", "invalid method"),
        (" / HTTP/1.1\r\nHost: h\r\n\r\n", "invalid method"),
        ("GET\r\nHost: h\r\n\r\n", "malformed request line"),
        ("GET /\r\nHost: h\r\n\r\n", "malformed request line"),
        ("GET  / HTTP/1.1\r\nHost: h\r\n\r\n", "invalid request target"),
        ("GET / x HTTP/1.1\r\nHost: h\r\n\r\n", "invalid request target"),
        ("GET a/b HTTP/1.1\r\nHost: h\r\n\r\n", "invalid request target"),
        ("GET * HTTP/1.1\r\nHost: h\r\n\r\n", "invalid request target"),
        ("GET 1http://x/ HTTP/1.1\r\nHost: h\r\n\r\n", "invalid request target"),
        ("GET /\tx HTTP/1.1\r\nHost: h\r\n\r\n", "invalid request target"),
        ("GET / http/1.1\r\nHost: h\r\n\r\n", "malformed HTTP version"),
        ("GET / HTTP/1.1 \r\nHost: h\r\n\r\n", "invalid request target"),
        ("GET / HTTP/11\r\nHost: h\r\n\r\n", "malformed HTTP version"),
        ("GET / HTTP/1.10\r\nHost: h\r\n\r\n", "malformed HTTP version"),
        ("GET / HTTP/1.1\nHost: h\r\n\r\n", "line ends with a bare LF instead of CRLF"),
        ("GET / HTTP/1.1\r\nHost: h\n\r\n", "line ends with a bare LF instead of CRLF"),
        ("GET / HTTP/1.1\rHost: h\r\n\r\n", "bare CR in a line"),
        ("GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n", "bare CR in a line"),
        ("GET / HTTP/1.1\r\nHost : h\r\n\r\n", "whitespace between header field name and colon"),
        ("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\r\n b\r\n\r\n", "obsolete line folding in header fields"),
        ("GET / HTTP/1.1\r\n Host: h\r\n\r\n", "obsolete line folding in header fields"),
        ("GET / HTTP/1.1\r\nHost h\r\n\r\n", "header field without a colon"),
        ("GET / HTTP/1.1\r\n: h\r\n\r\n", "empty header field name"),
        ("GET / HTTP/1.1\r\nHo\"st: h\r\n\r\n", "invalid header field name"),
        ("GET / HTTP/1.1\r\nHost: h\r\nX: a\u{7F}\r\n\r\n", "invalid character in header field value"),
        ("GET / HTTP/1.1\r\nHost: h\r\nX: a\u{0}b\r\n\r\n", "invalid character in header field value"),
        ("GET / HTTP/1.1\r\n\r\n", "missing or repeated Host header field"),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "missing or repeated Host header field"),
        ("GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", "missing or repeated Host header field"),
    ])
    func badRequest(input: String, reason: String) {
        let run = dripFeed(input)
        #expect(failure(run) == .badRequest(reason))
        #expect(run.events.count == 1)
    }

    @Test("a non-token byte in the method fails before the line ends (TLS on the plain port)")
    func methodFailsFast() {
        var parser = HTTPRequestParser()
        parser.feed([0x16, 0x03, 0x01, 0x02, 0x00])  // start of a TLS ClientHello, no CRLF
        #expect(parser.next() == .failure(.badRequest("invalid method")))
    }

    // MARK: - 505, 414, 431

    @Test("versions other than 1.0 and 1.1 are 505", arguments: ["HTTP/2.0", "HTTP/0.9", "HTTP/1.2", "HTTP/3.0"])
    func versionNotSupported(version: String) {
        let run = dripFeed("GET / \(version)\r\nHost: h\r\n\r\n")
        #expect(failure(run) == .versionNotSupported)
        #expect(failure(run)?.status == .httpVersionNotSupported)
    }

    @Test("a request line over the limit is 414, whether or not its end has arrived")
    func uriTooLong() {
        let limits = HTTPLimits(maxRequestLineBytes: 32)
        let fits = "GET /" + String(repeating: "a", count: 18) + " HTTP/1.1"  // exactly 32 bytes
        #expect(fits.utf8.count == 32)
        #expect(requests(dripFeed(fits + "\r\nHost: h\r\n\r\n", limits: limits)).count == 1)
        let tooLong = "GET /" + String(repeating: "a", count: 19) + " HTTP/1.1\r\nHost: h\r\n\r\n"
        #expect(failure(dripFeed(tooLong, limits: limits)) == .uriTooLong)
        var parser = HTTPRequestParser(limits: limits)
        parser.feed(bytes("GET /" + String(repeating: "a", count: 40)))
        #expect(parser.next() == .failure(.uriTooLong))
    }

    @Test("too many empty lines before a request are 400")
    func tooManyEmptyLines() {
        let limits = HTTPLimits(maxRequestLineBytes: 32)
        let run = dripFeed(String(repeating: "\r\n", count: 17) + "GET / HTTP/1.1\r\nHost: h\r\n\r\n", limits: limits)
        #expect(failure(run) == .badRequest("too many empty lines before the request line"))
    }

    @Test("a field section over the byte limit is 431, even before it ends")
    func headerBytesTooLarge() {
        let limits = HTTPLimits(maxHeaderBytes: 40)
        // "Host: h\r\n" is 9 bytes; "X: " + 26 + "\r\n" is 31; 40 in total fits.
        let fits = "GET / HTTP/1.1\r\nHost: h\r\nX: " + String(repeating: "v", count: 26) + "\r\n\r\n"
        #expect(requests(dripFeed(fits, limits: limits)).count == 1)
        let over = "GET / HTTP/1.1\r\nHost: h\r\nX: " + String(repeating: "v", count: 27) + "\r\n\r\n"
        #expect(failure(dripFeed(over, limits: limits)) == .headersTooLarge)
        var parser = HTTPRequestParser(limits: limits)
        parser.feed(bytes("GET / HTTP/1.1\r\nX: " + String(repeating: "v", count: 100)))
        #expect(parser.next() == .failure(.headersTooLarge))
    }

    @Test("more fields than the count limit is 431")
    func headerCountTooLarge() {
        let limits = HTTPLimits(maxHeaderCount: 3)
        #expect(requests(dripFeed("GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\n\r\n", limits: limits)).count == 1)
        let run = dripFeed("GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", limits: limits)
        #expect(failure(run) == .headersTooLarge)
        #expect(failure(run)?.status == .requestHeaderFieldsTooLarge)
    }
}
