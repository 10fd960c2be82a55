@testable import Gateway
import HTTP1
import Testing

@Suite("RESTReply: headers, CORS and print modes of every REST answer")
struct RESTReplyTests {
    private static func reply(_ query: String = "", origin: String? = nil, corsOrigins: [String] = []) -> RESTReply {
        RESTReply(parameters: QueryString(query), origin: origin, corsOrigins: corsOrigins)
    }

    private static let json = Array(#"{"a":{"b":[1,2]},"c":"x"}"#.utf8)

    @Test("a success carries the compact JSON with the production headers")
    func success() {
        let response = Self.reply().success(Self.json, headers: ["ETag": "abc"])
        #expect(response.status == .ok)
        #expect(response.body == Self.json)
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(response.headers["Cache-Control"] == "no-cache")
        #expect(response.headers["Access-Control-Allow-Origin"] == "*")
        #expect(response.headers["Vary"] == nil)
        #expect(response.headers["ETag"] == "abc")
    }

    @Test("print=pretty indents successes; print=silent answers 204 with no body but keeps extra headers")
    func printModes() {
        let pretty = Self.reply("print=pretty").success(Self.json)
        #expect(pretty.body == PrettyJSON.format(Self.json))
        let silent = Self.reply("print=silent").success(Self.json, headers: ["ETag": "abc"])
        #expect(silent.status == .noContent)
        #expect(silent.body.isEmpty)
        #expect(silent.headers["ETag"] == "abc")
        #expect(Self.reply("print=other").success(Self.json).body == Self.json)
    }

    @Test("plain answers ignore print=silent; 304 has no body")
    func plain() {
        let stale = Self.reply("print=silent").plain(.preconditionFailed, Self.json, headers: ["ETag": "e"])
        #expect(stale.status == .preconditionFailed)
        #expect(stale.body == Self.json)
        #expect(stale.headers["ETag"] == "e")
        #expect(Self.reply("print=pretty").plain(.preconditionFailed, Self.json).body == PrettyJSON.format(Self.json))
        let notModified = Self.reply().plain(.notModified, Array("null".utf8), headers: ["ETag": "e"])
        #expect(notModified.status == .notModified)
        #expect(notModified.body.isEmpty)
    }

    @Test(
        "errors are pretty-printed as production prints them, whatever the print mode",
        arguments: ["", "print=silent", "print=pretty"])
    func failure(query: String) {
        let response = Self.reply(query).failure(.badRequest("orderBy must be a valid JSON encoded path"))
        #expect(response.status == .badRequest)
        #expect(text(response.body) == "{\n  \"error\" : \"orderBy must be a valid JSON encoded path\"\n}\n")
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(response.headers["Allow"] == nil)
    }

    @Test("an error text with quotes, backslashes and structural characters is escaped and not re-indented")
    func failureEscaping() {
        let message = #"Index not defined, add ".indexOn": "a\b", for path "/{x}", to the rules"#
        let response = Self.reply().failure(.badRequest(message))
        #expect(text(response.body)
            == "{\n  \"error\" : \"Index not defined, add \\\".indexOn\\\": \\\"a\\\\b\\\", for path \\\"/{x}\\\", to the rules\"\n}\n")
    }

    @Test("405 answers list the allowed methods")
    func methodNotAllowed() {
        let response = Self.reply().failure(RESTError(status: .methodNotAllowed, message: "Method not allowed: FOO"))
        #expect(response.status == .methodNotAllowed)
        #expect(response.headers["Allow"] == "GET, PUT, POST, PATCH, DELETE, OPTIONS")
    }

    @Test("a preflight is 204 with the allowed methods, the requested headers echoed (else a default list), and a max age")
    func preflight() {
        let echoed = Self.reply().preflight(requestedHeaders: "X-Custom, Authorization")
        #expect(echoed.status == .noContent)
        #expect(echoed.body.isEmpty)
        #expect(echoed.headers["Access-Control-Allow-Methods"] == "GET, PUT, POST, PATCH, DELETE, OPTIONS")
        #expect(echoed.headers["Access-Control-Allow-Headers"] == "X-Custom, Authorization")
        #expect(echoed.headers["Access-Control-Max-Age"] != nil)
        #expect(echoed.headers["Access-Control-Allow-Origin"] == "*")
        let defaulted = Self.reply().preflight(requestedHeaders: nil)
        #expect(defaulted.headers["Access-Control-Allow-Headers"]?.contains("Authorization") == true)
    }

    @Test(
        "Access-Control-Allow-Origin: * by default; with configured origins, the request's origin when listed (with Vary)",
        arguments: [
            (nil, [String](), "*"),
            ("https://app.example", [], "*"),
            ("https://app.example", ["https://app.example", "https://other.example"], "https://app.example"),
            ("https://evil.example", ["https://app.example"], nil),
            (nil, ["https://app.example"], nil),
        ] as [(String?, [String], String?)])
    func cors(origin: String?, corsOrigins: [String], expected: String?) {
        let response = Self.reply(origin: origin, corsOrigins: corsOrigins).success(Self.json)
        #expect(response.headers["Access-Control-Allow-Origin"] == expected)
        #expect(response.headers["Vary"] == (expected.map { $0 == "*" ? nil : "Origin" } ?? nil))
        #expect(response.headers.contains(name: "Access-Control-Expose-Headers") == (expected != nil))
    }

    @Test("an event stream's head has the stream content type and the CORS headers")
    func streamHead() {
        let headers = Self.reply(origin: "https://app.example", corsOrigins: ["https://app.example"])
            .commonHeaders(contentType: "text/event-stream; charset=utf-8")
        #expect(headers["Content-Type"] == "text/event-stream; charset=utf-8")
        #expect(headers["Cache-Control"] == "no-cache")
        #expect(headers["Access-Control-Allow-Origin"] == "https://app.example")
        #expect(headers["Vary"] == "Origin")
    }
}
