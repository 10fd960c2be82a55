import Testing
import WebSocket

@Suite struct WebSocketHandshakeTests {
    /// A valid upgrade request as a list of headers, with `changes` applied (a `nil` value removes the header).
    private func request(
        method: String = "GET", version: (Int, Int) = (1, 1), _ changes: [String: String?] = [:],
        extra: [(name: String, value: String)] = []
    ) -> WebSocketHandshakeRequest {
        var headers: [(name: String, value: String)] = [
            ("Host", "server.example.com"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13"),
        ]
        for (name, value) in changes {
            headers.removeAll { $0.name == name }
            if let value { headers.append((name, value)) }
        }
        return WebSocketHandshakeRequest(method: method, httpVersion: version, headers: headers + extra)
    }

    private func rejection(_ result: WebSocketHandshake.Result) -> WebSocketHandshakeError? {
        if case .rejected(let error) = result { return error }
        return nil
    }

    private func acceptance(_ result: WebSocketHandshake.Result) -> WebSocketHandshakeAcceptance? {
        if case .accepted(let acceptance) = result { return acceptance }
        return nil
    }

    @Test("the RFC 6455 §1.3 key yields the published accept value")
    func rfcAcceptValue() {
        #expect(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test("a valid request is accepted with the 101 headers")
    func accepts() throws {
        let accepted = try #require(acceptance(WebSocketHandshake.validate(request())))
        #expect(accepted.headers.map(\.name) == ["Upgrade", "Connection", "Sec-WebSocket-Accept"])
        #expect(accepted.headers.map(\.value) == ["websocket", "Upgrade", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="])
        #expect(accepted.subprotocol == nil)
        #expect(accepted.extensionResponse == nil)
        #expect(accepted.codec == nil)
        #expect(WebSocketHandshakeAcceptance.statusCode == 101)
    }

    @Test("header names and tokens match case-insensitively and within lists")
    func lenientTokens() {
        let lenient = WebSocketHandshakeRequest(
            method: "GET", httpVersion: (1, 1),
            headers: [
                ("host", "h"), ("UPGRADE", "WebSocket"), ("connection", "keep-alive, upgrade"),
                ("sec-websocket-key", " dGhlIHNhbXBsZSBub25jZQ== "), ("SEC-WEBSOCKET-VERSION", "13"),
            ])
        #expect(acceptance(WebSocketHandshake.validate(lenient)) != nil)
        #expect(acceptance(WebSocketHandshake.validate(request(version: (2, 0)))) != nil)
    }

    @Test(
        "each malformed request is rejected with its status",
        arguments: [
            ("POST method", "POST", (1, 1), [:], WebSocketHandshakeError.methodNotGet("POST"), 400),
            ("HTTP/1.0", "GET", (1, 0), [:], .httpVersionTooOld, 400),
            ("no Host", "GET", (1, 1), ["Host": nil], .missingHost, 400),
            ("no Upgrade", "GET", (1, 1), ["Upgrade": nil], .missingUpgradeWebSocket, 426),
            ("Upgrade: h2c", "GET", (1, 1), ["Upgrade": "h2c"], .missingUpgradeWebSocket, 426),
            ("no Connection upgrade", "GET", (1, 1), ["Connection": "keep-alive"], .missingConnectionUpgrade, 400),
            ("no key", "GET", (1, 1), ["Sec-WebSocket-Key": nil], .invalidKey, 400),
            ("key not base64", "GET", (1, 1), ["Sec-WebSocket-Key": "not base64!"], .invalidKey, 400),
            ("key of 15 bytes", "GET", (1, 1), ["Sec-WebSocket-Key": "AAAAAAAAAAAAAAAAAAAA"], .invalidKey, 400),
            ("key of 17 bytes", "GET", (1, 1), ["Sec-WebSocket-Key": "AAAAAAAAAAAAAAAAAAAAAAA="], .invalidKey, 400),
            ("no version", "GET", (1, 1), ["Sec-WebSocket-Version": nil], .unsupportedVersion(nil), 426),
            ("version 8", "GET", (1, 1), ["Sec-WebSocket-Version": "8"], .unsupportedVersion("8"), 426),
            ("versions 13 and 8", "GET", (1, 1), ["Sec-WebSocket-Version": "13, 8"], .unsupportedVersion("13"), 426),
        ] as [(String, String, (Int, Int), [String: String?], WebSocketHandshakeError, Int)])
    func rejects(
        label: String, method: String, version: (Int, Int), changes: [String: String?], error: WebSocketHandshakeError,
        status: Int
    ) {
        let result = WebSocketHandshake.validate(request(method: method, version: version, changes))
        #expect(rejection(result) == error, "\(label)")
        #expect(error.statusCode == status)
        #expect(!error.message.isEmpty)
    }

    @Test("a repeated key is rejected")
    func repeatedKey() {
        let result = WebSocketHandshake.validate(request(extra: [("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")]))
        #expect(rejection(result) == .invalidKey)
    }

    @Test("426 responses tell the client which version and upgrade to use")
    func upgradeRequiredHeaders() {
        for error in [WebSocketHandshakeError.unsupportedVersion("8"), .missingUpgradeWebSocket] {
            let headers = error.responseHeaders
            #expect(headers.contains { $0.name == "Sec-WebSocket-Version" && $0.value == "13" })
            #expect(headers.contains { $0.name == "Upgrade" && $0.value == "websocket" })
        }
        #expect(WebSocketHandshakeError.invalidKey.responseHeaders.isEmpty)
    }

    @Test("origins outside the allowed list are refused with 403")
    func origins() {
        let configuration = WebSocketHandshakeConfiguration(allowedOrigins: ["https://App.example"])
        let allowed = request(extra: [("Origin", "https://app.EXAMPLE")])
        #expect(acceptance(WebSocketHandshake.validate(allowed, configuration: configuration)) != nil)
        let refused = request(extra: [("Origin", "https://evil.example")])
        let error = rejection(WebSocketHandshake.validate(refused, configuration: configuration))
        #expect(error == .originNotAllowed("https://evil.example"))
        #expect(error?.statusCode == 403)
        #expect(acceptance(WebSocketHandshake.validate(request(), configuration: configuration)) != nil)
        let strict = WebSocketHandshakeConfiguration(allowedOrigins: ["https://app.example"], allowsMissingOrigin: false)
        #expect(rejection(WebSocketHandshake.validate(request(), configuration: strict)) == .originNotAllowed(nil))
    }

    @Test("the subprotocol hook picks one of the offered subprotocols")
    func subprotocols() throws {
        let configuration = WebSocketHandshakeConfiguration(selectSubprotocol: { offered in offered.last })
        let offered = request(extra: [("Sec-WebSocket-Protocol", "chat, superchat"), ("Sec-WebSocket-Protocol", "v2")])
        let accepted = try #require(acceptance(WebSocketHandshake.validate(offered, configuration: configuration)))
        #expect(accepted.subprotocol == "v2")
        #expect(accepted.headers.contains { $0.name == "Sec-WebSocket-Protocol" && $0.value == "v2" })

        let rogue = WebSocketHandshakeConfiguration(selectSubprotocol: { _ in "not-offered" })
        let ignored = try #require(acceptance(WebSocketHandshake.validate(offered, configuration: rogue)))
        #expect(ignored.subprotocol == nil)
        #expect(try #require(acceptance(WebSocketHandshake.validate(offered))).subprotocol == nil)
    }

    @Test("the extension hook sees the parsed offers and its answer goes into the response")
    func extensionsHook() throws {
        final class NullCodec: WebSocketMessageCodec {
            func decode(_ input: UnsafeRawBufferPointer, isFinal: Bool, into output: inout [UInt8], maxOutputCount: Int)
                throws(WebSocketProtocolError)
            { output.append(contentsOf: input) }
            func encode(_ payload: UnsafeRawBufferPointer) -> [UInt8]? { nil }
        }
        let configuration = WebSocketHandshakeConfiguration(negotiateExtensions: { offers in
            guard offers.map(\.name) == ["x-one", "x-two"] else { return nil }
            return WebSocketExtensionAcceptance(responseHeaderValue: "x-two", codec: NullCodec())
        })
        let offered = request(extra: [("Sec-WebSocket-Extensions", "x-one; a=1, x-two")])
        let accepted = try #require(acceptance(WebSocketHandshake.validate(offered, configuration: configuration)))
        #expect(accepted.extensionResponse == "x-two")
        #expect(accepted.codec != nil)
        #expect(accepted.headers.last?.value == "x-two")
        let none = try #require(acceptance(WebSocketHandshake.validate(request(), configuration: configuration)))
        #expect(none.extensionResponse == nil)
    }
}

@Suite struct WebSocketClientHandshakeTests {
    private let handshake = WebSocketClientHandshake(key: "dGhlIHNhbXBsZSBub25jZQ==")

    private func lookup(_ headers: [(String, String)]) -> (String) -> [String] {
        { name in headers.filter { $0.0.lowercased() == name.lowercased() }.map(\.1) }
    }

    @Test("the request head carries the key and version")
    func requestHead() {
        let head = String(decoding: handshake.requestHead(host: "h:1", target: "/ws", subprotocols: ["a", "b"], extensions: "permessage-deflate"), as: UTF8.self)
        #expect(head.hasPrefix("GET /ws HTTP/1.1\r\nHost: h:1\r\n"))
        #expect(head.contains("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"))
        #expect(head.contains("Sec-WebSocket-Version: 13\r\n"))
        #expect(head.contains("Sec-WebSocket-Protocol: a, b\r\n"))
        #expect(head.contains("Sec-WebSocket-Extensions: permessage-deflate\r\n"))
        #expect(head.hasSuffix("\r\n\r\n"))
        let fresh = WebSocketClientHandshake()
        #expect(fresh.key != WebSocketClientHandshake().key)
        let request = WebSocketHandshakeRequest(
            method: "GET", httpVersion: (1, 1),
            headers: [("Host", "h"), ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", fresh.key),
                ("Sec-WebSocket-Version", "13")])
        guard case .accepted(let accepted) = WebSocketHandshake.validate(request) else {
            Issue.record("a generated key must be valid")
            return
        }
        #expect(accepted.headers.contains { $0.name == "Sec-WebSocket-Accept" && $0.value == fresh.expectedAccept })
    }

    @Test("a correct response is accepted")
    func acceptsResponse() throws {
        let result = try handshake.validateResponse(
            statusCode: 101,
            headerValues: lookup([
                ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
                ("Sec-WebSocket-Protocol", "b"), ("Sec-WebSocket-Extensions", "permessage-deflate; server_no_context_takeover"),
            ]), offeredSubprotocols: ["a", "b"])
        #expect(result.subprotocol == "b")
        #expect(result.extensions.map(\.name) == ["permessage-deflate"])
    }

    @Test("each wrong response is refused")
    func refusesResponses() {
        let good: [(String, String)] = [
            ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
        ]
        let cases: [(Int, [(String, String)], WebSocketClientHandshakeError)] = [
            (200, good, .unexpectedStatus(200)),
            (101, good.filter { $0.0 != "Upgrade" }, .missingUpgradeWebSocket),
            (101, good.filter { $0.0 != "Connection" }, .missingConnectionUpgrade),
            (101, good.filter { $0.0 != "Sec-WebSocket-Accept" } + [("Sec-WebSocket-Accept", "x")], .acceptMismatch),
            (101, good + [("Sec-WebSocket-Protocol", "c")], .unexpectedSubprotocol("c")),
            (101, good + [("Sec-WebSocket-Extensions", "bad;;")], .malformedExtensions),
        ]
        for (status, headers, expected) in cases {
            #expect(throws: expected) {
                try handshake.validateResponse(statusCode: status, headerValues: lookup(headers), offeredSubprotocols: ["a"])
            }
        }
    }
}
