import Testing
import WebSocket
import WebSocketDeflate

/// A client and a server state machine connected back to back, from the opening handshake on (NIO's
/// `interactInMemory` idea): everything one side sends is fed to the other.
@Suite struct WebSocketInMemoryTests {
    /// Runs the opening handshake in memory and returns both ends.
    private func connect(deflate: Bool) throws -> (client: WebSocketConnectionStateMachine, server: WebSocketConnectionStateMachine) {
        let clientHandshake = WebSocketClientHandshake()
        let head = String(
            decoding: clientHandshake.requestHead(
                host: "127.0.0.1", target: "/.ws", extensions: deflate ? PerMessageDeflate.clientOffer() : nil),
            as: UTF8.self)
        // Minimal head parsing for the test: "Name: value" lines after the request line.
        let lines = head.split(separator: "\r\n").dropFirst()
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), String(line[line.index(after: colon)...].drop { $0 == " " }))
        }
        let configuration = WebSocketHandshakeConfiguration(negotiateExtensions: PerMessageDeflate.serverNegotiation())
        let result = WebSocketHandshake.validate(
            WebSocketHandshakeRequest(method: "GET", httpVersion: (1, 1), headers: headers), configuration: configuration)
        guard case .accepted(let acceptance) = result else {
            Issue.record("handshake rejected: \(result)")
            throw CancellationError()
        }
        let response = try clientHandshake.validateResponse(statusCode: 101) { name in
            acceptance.headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
        }
        var clientCodec: (any WebSocketMessageCodec)?
        if let element = response.extensions.first {
            let parameters = try #require(PerMessageDeflate.acceptResponse(element))
            clientCodec = PerMessageDeflateCodec(role: .client, parameters: parameters)
        }
        #expect((clientCodec != nil) == deflate)
        #expect((acceptance.codec != nil) == deflate)
        return (
            WebSocketConnectionStateMachine(role: .client, codec: clientCodec),
            WebSocketConnectionStateMachine(role: .server, codec: acceptance.codec)
        )
    }

    @Test("messages flow both ways, with and without deflate", arguments: [false, true])
    func messagesBothWays(deflate: Bool) throws {
        var (client, server) = try connect(deflate: deflate)
        let messages: [(WebSocketOpcode, [UInt8])] = [
            (.text, Array("hi".utf8)),
            (.text, Array(String(repeating: "{\"t\":\"d\",\"d\":{\"r\":1,\"a\":\"q\"}}", count: 100).utf8)),
            (.binary, (0..<100_000).map { UInt8(truncatingIfNeeded: $0 / 7) }),
            (.binary, []),
        ]
        for (opcode, payload) in messages {
            let expected: WebSocketMessage = opcode == .text ? .text(payload) : .binary(payload)
            let up = client.encodeMessage(payload, opcode: opcode)
            #expect(feed(&server, [up]) == [.message(expected)])
            let down = server.encodeMessage(payload, opcode: opcode)
            #expect(feed(&client, [down]) == [.message(expected)])
            if deflate && payload.count > 1000 {
                #expect(up.count < payload.count / 2)
                #expect(down.count < payload.count / 2)
            }
        }
    }

    @Test("a ping from the server is answered by the client", arguments: [false, true])
    func pingPong(deflate: Bool) throws {
        var (client, server) = try connect(deflate: deflate)
        var actions: [WebSocketConnectionStateMachine.Action] = []
        server.ping([1, 2, 3]).withUnsafeBytes { client.bytesReceived($0, into: &actions) }
        guard case .send(let pong)? = actions.first, actions.count == 1 else {
            Issue.record("expected a pong, got \(actions.count) actions")
            return
        }
        // The server accepts the masked pong silently.
        #expect(feed(&server, [pong]).isEmpty)
        #expect(SentFrame.decode(pong)?.payload == [1, 2, 3])
    }

    @Test("a close started by the client completes on both sides", arguments: [false, true])
    func closeHandshake(deflate: Bool) throws {
        var (client, server) = try connect(deflate: deflate)
        let close = client.close(code: .normalClosure, reason: "done")
        var serverActions: [WebSocketConnectionStateMachine.Action] = []
        close.withUnsafeBytes { server.bytesReceived($0, into: &serverActions) }
        #expect(server.state == .closed)
        guard case .send(let reply)? = serverActions.first else {
            Issue.record("expected a close reply")
            return
        }
        #expect(Outcome(serverActions[1]) == .closeConnection(.handshakeCompleted(peerCode: 1000, peerReason: "done", initiatedLocally: false)))
        #expect(feed(&client, [reply]) == [.closeConnection(.handshakeCompleted(peerCode: 1000, peerReason: "", initiatedLocally: true))])
        #expect(client.state == .closed)
    }

    @Test("context takeover makes a repeated message cheaper when both sides keep their windows")
    func contextTakeover() {
        let parameters = PerMessageDeflateParameters()
        var client = WebSocketConnectionStateMachine(
            role: .client, codec: PerMessageDeflateCodec(role: .client, parameters: parameters))
        var server = WebSocketConnectionStateMachine(
            role: .server, codec: PerMessageDeflateCodec(role: .server, parameters: parameters))
        let payload = Array("{\"path\":\"/users/alice\",\"data\":{\"name\":\"Alice\",\"age\":30,\"tags\":[\"a\",\"b\"]}}".utf8)
        let first = server.encodeMessage(payload, opcode: .text)
        let second = server.encodeMessage(payload, opcode: .text)
        #expect(second.count < first.count)
        #expect(feed(&client, [first + second]) == [.message(.text(payload)), .message(.text(payload))])
        let up1 = client.encodeMessage(payload, opcode: .text)
        let up2 = client.encodeMessage(payload, opcode: .text)
        #expect(up2.count < up1.count)
        #expect(feed(&server, [up1, up2]) == [.message(.text(payload)), .message(.text(payload))])
    }
}
