import Testing
import WebSocket

@testable import LoadTester

@Suite("UpgradeRequest")
struct UpgradeRequestTests {
    private func request(_ change: (inout BenchConfiguration) -> Void = { _ in }) throws -> UpgradeRequest {
        var configuration = BenchConfiguration(scenario: .fanout)
        configuration.url = "ws://127.0.0.1:9000"
        change(&configuration)
        return UpgradeRequest(configuration: configuration, server: try configuration.serverURL)
    }

    private func response(_ headers: [String]) -> ArraySlice<UInt8> {
        let accept = WebSocketClientHandshake(key: "Y2Fub3B5IGJlbmNoIGtleQ==").expectedAccept
        let lines = ["HTTP/1.1 101 Switching Protocols", "Upgrade: websocket", "Connection: Upgrade",
            "Sec-WebSocket-Accept: \(accept)"] + headers
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)[...]
    }

    @Test("asks for the Firebase endpoint, the mqtt subprotocol and permessage-deflate as configured")
    func buildsRequests() throws {
        let plain = String(decoding: try request().bytes, as: UTF8.self)
        #expect(plain.hasPrefix("GET /.ws?v=5&ns=bench HTTP/1.1\r\nHost: 127.0.0.1:9000\r\n"))
        #expect(!plain.contains("Sec-WebSocket-Extensions"))
        let mqtt = String(decoding: try request { $0.wireProtocol = .mqtt; $0.deflate = true }.bytes, as: UTF8.self)
        #expect(mqtt.contains("GET / HTTP/1.1"))
        #expect(mqtt.contains("Sec-WebSocket-Protocol: mqtt\r\n"))
        #expect(mqtt.contains("Sec-WebSocket-Extensions: permessage-deflate"))
    }

    @Test("accepts a genuine answer and makes a codec only when deflate was agreed")
    func acceptsAnswers() throws {
        #expect(try request().accept(head: response([])) == nil)
        let offered = try request { $0.deflate = true }
        let codec = try offered.accept(head: response(["Sec-WebSocket-Extensions: permessage-deflate"]))
        #expect(codec != nil)
        #expect(try request { $0.deflate = true }.accept(head: response([])) == nil)
    }

    @Test("refuses refusals, wrong accept values, unasked extensions and a missing subprotocol")
    func refusesBadAnswers() throws {
        #expect(throws: UpgradeFailure.self) {
            try request().accept(head: Array("HTTP/1.1 405 Method Not Allowed\r\n\r\n".utf8)[...])
        }
        #expect(throws: UpgradeFailure.self) {
            try request().accept(
                head: Array(
                    "HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: x\r\n\r\n"
                        .utf8)[...])
        }
        #expect(throws: UpgradeFailure.self) {
            try request().accept(head: response(["Sec-WebSocket-Extensions: permessage-deflate"]))
        }
        #expect(throws: UpgradeFailure.self) { try request { $0.wireProtocol = .mqtt }.accept(head: response([])) }
        #expect(throws: UpgradeFailure.self) { try request().accept(head: Array("garbage\r\n\r\n".utf8)[...]) }
    }

    @Test("finds the end of the head wherever the reads split it")
    func findsHeadEnd() {
        let bytes = Array("HTTP/1.1 101 OK\r\nA: b\r\n\r\nframes".utf8)
        #expect(UpgradeRequest.headEnd(in: bytes, searchingFrom: 0) == 25)
        #expect(UpgradeRequest.headEnd(in: bytes, searchingFrom: -3) == 25)
        #expect(UpgradeRequest.headEnd(in: Array(bytes[..<24]), searchingFrom: 0) == nil)
    }
}
