import DataModel
@testable import Gateway
import HTTP1
import Testing

@Suite("RESTRequest: URL path, namespace, method and credential of a REST request")
struct RESTRequestTests {
    // MARK: - Location

    @Test(
        "a /<path>.json URL addresses the percent-decoded path",
        arguments: [
            ("/.json", [String](), false),
            ("//.json", [], false),
            ("/a.json", ["a"], false),
            ("/a/b/c.json", ["a", "b", "c"], false),
            ("/a/b/.json", ["a", "b"], false),
            ("//a///b//.json", ["a", "b"], false),
            ("/users/-Nabc_123.json", ["users", "-Nabc_123"], false),
            ("/a%20b.json", ["a b"], false),
            ("/caf%C3%A9/%E2%9C%93.json", ["café", "✓"], false),
            ("/a%zz.json", ["a%zz"], false),
            ("/a+b.json", ["a+b"], false),
            ("/a%2Bb.json", ["a+b"], false),
            ("/100.json", ["100"], false),
            ("/a\"b\\c.json", ["a\"b\\c"], false),
            ("/x/.priority.json", ["x"], true),
            ("/x/y/.priority/.json", ["x", "y"], true),
            ("/x/%2Epriority.json", ["x"], true),
        ])
    func locations(urlPath: String, keys: [String], priority: Bool) throws {
        let location = try #require(try RESTRequest.location(urlPath))
        #expect(location.0.keys.map(\.string) == keys)
        #expect(location.1 == priority)
    }

    @Test(
        "a URL path without the .json suffix is not a REST URL",
        arguments: ["/", "/a", "/a.JSON", "/a.json/", "/a.jsonx", "/.ws", "/.health", "/a.js", "/json"])
    func notREST(urlPath: String) throws {
        #expect(try RESTRequest.location(urlPath) == nil)
    }

    @Test(
        "an invalid key anywhere in the path is 400 Invalid path",
        arguments: [
            "/a.b.json", "/..json", "/a/%2E%2E.json", "/a$b.json", "/%24key.json", "/a%23b.json", "/a[0].json",
            "/a%5B0%5D.json", "/a]b.json", "/a%00b.json", "/a%1Fb.json", "/a%7Fb.json", "/a%0Ab.json",
            "/a%2Fb.json", "/a.json.json", "/.priority.json", "//.priority/.json", "/x/.priority/y.json",
            "/x/.priority/.priority.json", "/x/.value.json", "/.sv.json",
        ])
    func invalidPaths(urlPath: String) throws {
        let error = try #require(restError { () throws(RESTError) in try RESTRequest.location(urlPath) })
        #expect(error.status == .badRequest)
        #expect(error.message == "Invalid path: Invalid token in path")
    }

    @Test("keys are limited to 768 bytes")
    func keyLength() throws {
        let longest = String(repeating: "k", count: 768)
        #expect(try RESTRequest.location("/\(longest).json")?.0.keys.first?.string == longest)
        let error = restError { () throws(RESTError) in try RESTRequest.location("/\(longest)k.json") }
        #expect(error?.message == "Invalid path: Invalid token in path")
    }

    @Test("paths are limited to 32 segments; .priority does not count")
    func depthLimit() throws {
        let deepest = String(repeating: "/k", count: 32)
        #expect(try RESTRequest.location(deepest + ".json")?.0.depth == 32)
        #expect(try RESTRequest.location(deepest + "/.priority.json")?.1 == true)
        let error = restError { () throws(RESTError) in try RESTRequest.location(deepest + "/k.json") }
        #expect(error?.message == "Invalid path: Invalid token in path")
    }

    // MARK: - Namespace

    @Test(
        "the namespace comes from ns=, else a <ns>.<domain> host that is not an IP address, else the default",
        arguments: [
            ("ns=alpha", "beta.example.com", "alpha"),
            ("ns=alpha", nil, "alpha"),
            ("ns=alpha&ns=gamma", "beta.example.com", "gamma"),
            ("ns=", "beta.example.com", "beta"),
            ("", "beta.example.com", "beta"),
            ("", "beta.firebaseio.com:443", "beta"),
            ("", "beta.localhost:9000", "beta"),
            ("", "beta.localhost", "beta"),
            ("", "a.b.c.d.example", "a"),
            ("", "localhost", "default"),
            ("", "localhost:9000", "default"),
            ("", "127.0.0.1", "default"),
            ("", "127.0.0.1:9000", "default"),
            ("", "10.1.2.3:80", "default"),
            ("", "[::1]", "default"),
            ("", "[::1]:9000", "default"),
            ("", "[fe80::1%25eth0]:9000", "default"),
            ("", ".example.com", "default"),
            ("", "", "default"),
            ("", ":9000", "default"),
            ("", nil, "default"),
        ] as [(String, String?, String)])
    func namespaces(query: String, host: String?, expected: String) {
        let name = RESTRequest.namespaceName(parameters: QueryString(query), host: host, defaultName: "default")
        #expect(name == expected)
    }

    // MARK: - Method

    @Test(
        "POST may be overridden by the X-HTTP-Method-Override header or the x-http-method-override parameter",
        arguments: [
            ("POST", [String: String](), "", "POST"),
            ("POST", ["X-HTTP-Method-Override": "PATCH"], "", "PATCH"),
            ("POST", ["x-http-method-override": "delete"], "", "DELETE"),
            ("POST", [:], "x-http-method-override=put", "PUT"),
            ("POST", ["X-HTTP-Method-Override": "PUT"], "x-http-method-override=DELETE", "PUT"),
            ("POST", [:], "X-HTTP-Method-Override=PUT", "POST"),
            ("POST", ["X-HTTP-Method-Override": "foo"], "", "FOO"),
            ("GET", ["X-HTTP-Method-Override": "DELETE"], "x-http-method-override=DELETE", "GET"),
            ("PUT", ["X-HTTP-Method-Override": "DELETE"], "", "PUT"),
            ("PATCH", [:], "x-http-method-override=DELETE", "PATCH"),
            ("get", [:], "", "get"),
        ])
    func effectiveMethod(method: String, headers: [String: String], query: String, expected: String) {
        let head = HTTPRequestHead(method: method, target: "/a.json", headers: HTTPHeaders(headers.map { (name: $0.key, value: $0.value) }))
        #expect(RESTRequest.effectiveMethod(head, parameters: QueryString(query)) == expected)
    }

    @Test("a request is parsed with its overridden method, path and priority flag")
    func parsesRequest() throws {
        var headers = HTTPHeaders()
        headers.add(name: "X-HTTP-Method-Override", value: "put")
        let head = HTTPRequestHead(method: "POST", target: "/a/b/.priority.json?print=silent", headers: headers)
        let parameters = QueryString(head.query)
        let request = try #require(try RESTRequest(HTTPRequest(head: head, body: Array("5".utf8)), parameters: parameters))
        #expect(request.method == .put)
        #expect(request.path == (try Path("/a/b")))
        #expect(request.addressesPriority)
        #expect(request.body == Array("5".utf8))
        #expect(request.parameters["print"] == "silent")
    }

    @Test("a non-REST URL parses to nil whatever the method")
    func nonRESTRequest() throws {
        let head = HTTPRequestHead(method: "FOO", target: "/a?x=.json")
        #expect(try RESTRequest(HTTPRequest(head: head), parameters: QueryString(head.query)) == nil)
    }

    @Test("an unknown method is 405 naming it", arguments: ["FOO", "TRACE", "HEAD", "CONNECT", "get"])
    func unknownMethod(method: String) throws {
        let head = HTTPRequestHead(method: method, target: "/a.json")
        let error = try #require(restError { () throws(RESTError) in
            try RESTRequest(HTTPRequest(head: head), parameters: QueryString(nil))
        })
        #expect(error.status == .methodNotAllowed)
        #expect(error.message == "Method not allowed: \(method)")
    }

    @Test("an overlong unknown method is named by its first 32 characters")
    func longMethod() throws {
        let method = String(repeating: "X", count: 100)
        let head = HTTPRequestHead(method: method, target: "/a.json")
        let error = restError { () throws(RESTError) in
            try RESTRequest(HTTPRequest(head: head), parameters: QueryString(nil))
        }
        #expect(error?.message == "Method not allowed: " + String(repeating: "X", count: 32))
    }

    // MARK: - Credential

    @Test(
        "the credential comes from auth=, access_token= or an Authorization Bearer header",
        arguments: [
            ("auth=t1", nil, "t1"),
            ("access_token=t2", nil, "t2"),
            ("auth=t1&access_token=t2", nil, "t1"),
            ("auth=t1", "Bearer h", "t1"),
            ("", "Bearer h", "h"),
            ("", "bearer   h  ", "h"),
            ("", "BEARER h", "h"),
            ("", "Basic dXNlcjpwYXNz", nil),
            ("", "Bearer", nil),
            ("", nil, nil),
        ] as [(String, String?, String?)])
    func credential(query: String, authorization: String?, expected: String?) {
        var headers = HTTPHeaders()
        if let authorization { headers.add(name: "Authorization", value: authorization) }
        let head = HTTPRequestHead(method: "GET", target: "/a.json", headers: headers)
        #expect(RESTRequest.credential(head, parameters: QueryString(query)) == expected)
    }
}
