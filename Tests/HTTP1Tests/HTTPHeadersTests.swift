import HTTP1
import Testing

@Suite struct HTTPHeadersTests {
    @Test("lookups ignore the case of names but keep values and order")
    func caseInsensitiveLookup() {
        var headers: HTTPHeaders = ["Content-Type": "text/plain", "X-A": "1"]
        headers.add(name: "x-a", value: "2")
        #expect(headers["content-type"] == "text/plain")
        #expect(headers["CONTENT-TYPE"] == "text/plain")
        #expect(headers.values(for: "X-a") == ["1", "2"])
        #expect(headers["missing"] == nil)
        #expect(headers.values(for: "missing").isEmpty)
        #expect(headers.contains(name: "x-A"))
        #expect(headers.count == 3)
    }

    @Test("containsToken reads comma-separated lists across fields, ignoring case and whitespace")
    func tokens() {
        let headers = HTTPHeaders([
            (name: "Connection", value: "keep-alive, Upgrade"),
            (name: "connection", value: " ,\tTE ,"),
            (name: "Upgrade", value: "websocket"),
        ])
        #expect(headers.containsToken("upgrade", in: "CONNECTION"))
        #expect(headers.containsToken("Keep-Alive", in: "connection"))
        #expect(headers.containsToken("te", in: "connection"))
        #expect(!headers.containsToken("keep", in: "connection"))
        #expect(!headers.containsToken("", in: "connection"))
        #expect(headers.containsToken("WebSocket", in: "upgrade"))
        #expect(!headers.containsToken("websocket", in: "connection"))
    }

    @Test("replaceOrAdd and remove act on every field with the name")
    func replaceAndRemove() {
        var headers = HTTPHeaders([(name: "A", value: "1"), (name: "B", value: "2"), (name: "a", value: "3")])
        headers.replaceOrAdd(name: "A", value: "9")
        #expect(headers.map(\.name) == ["B", "A"])
        #expect(headers["a"] == "9")
        headers.remove(name: "b")
        #expect(headers.map(\.value) == ["9"])
        headers.remove(name: "a")
        #expect(headers.isEmpty)
    }

    @Test("equality compares names exactly and in order")
    func equality() {
        let headers: HTTPHeaders = ["A": "1", "B": "2"]
        #expect(headers == HTTPHeaders([(name: "A", value: "1"), (name: "B", value: "2")]))
        #expect(headers != ["a": "1", "B": "2"])
        #expect(headers != ["B": "2", "A": "1"])
    }
}

@Suite struct HTTPRequestHeadTests {
    @Test("the initializer derives path, query and keep-alive", arguments: [
        ("/a/b?c", "/a/b", "c"),
        ("/", "/", nil),
        ("/a?b?c", "/a", "b?c"),
        ("http://h:8080/p?q", "/p", "q"),
        ("*", "*", nil),
    ] as [(String, String, String?)])
    func derivedParts(target: String, path: String, query: String?) {
        let head = HTTPRequestHead(method: "GET", target: target)
        #expect(head.path == path)
        #expect(head.query == query)
        #expect(head.keepAlive)
        #expect(!HTTPRequestHead(method: "GET", target: target, version: .http1_0).keepAlive)
    }

    @Test("versions print as on the wire")
    func versionDescription() {
        #expect(HTTPVersion.http1_1.description == "HTTP/1.1")
        #expect(HTTPVersion(major: 1, minor: 0) == .http1_0)
    }
}
