import Foundation
import HTTPServer
import TLS
import TestSupport
import Transport
import Testing
import WebSocket

@Suite("WebSocket over real sockets", .serialized)
struct WebSocketServerTests {
    @Test("the echo endpoint returns text and binary messages", arguments: [false, true])
    func echo(deflate: Bool) throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try TestWebSocketClient(port: server.port, deflate: deflate)
        #expect((client.responseHeaders["sec-websocket-extensions"] != nil) == deflate)
        let text = String(repeating: "hello canopy ", count: 50)
        try client.send(text: text)
        #expect(try client.nextMessage() == .text(Array(text.utf8)))
        try client.send(binary: [0, 1, 2, 255])
        #expect(try client.nextMessage() == .binary([0, 1, 2, 255]))
        try client.sendClose()
        guard case .handshakeCompleted(let code, _, _) = try client.nextClosure() else {
            Issue.record("close handshake did not complete")
            return
        }
        #expect(code == .normalClosure)
    }

    @Test("an upgrade with the wrong version gets 426 naming version 13")
    func wrongVersion() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        try client.send(
            "GET /echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 12\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 426)
        #expect(response.headers["sec-websocket-version"] == "13")
    }

    @Test("graceful shutdown closes every WebSocket with 1001")
    func gracefulShutdown() throws {
        let server = try TestServer()
        let clients = try (0..<3).map { _ in try TestWebSocketClient(port: server.port) }
        for client in clients {
            try client.send(text: "ready")
            _ = try client.nextMessage()
        }
        let stopped = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            server.stop()
            stopped.signal()
        }
        for client in clients {
            let closure = try client.nextClosure()
            guard case .handshakeCompleted(let code, _, _) = closure else {
                Issue.record("expected a close frame, got \(closure)")
                continue
            }
            #expect(code == .goingAway)
        }
        #expect(stopped.wait(timeout: .now() + 15) == .success)
        #expect(server.server.liveConnections == 0)
    }

    @Test("a slow reader is cut off while a fast reader keeps receiving everything")
    func slowReaderIsCutOff() throws {
        let server = try TestServer {
            $0.outboundLimits = .init(lowWaterMark: 64 * 1024, highWaterMark: 256 * 1024, hardLimit: 1024 * 1024)
        }
        defer { server.stop() }
        let slow = try TestWebSocketClient(port: server.port, path: "/broadcast")
        let fast = try TestWebSocketClient(port: server.port, path: "/broadcast")
        let payload = [UInt8](repeating: 7, count: 64 * 1024)
        // Keep publishing until the server gives up on the slow reader (its socket buffers and the
        // 1 MiB hard limit fill up); the fast reader must get every message, in order, meanwhile.
        var sent = 0
        while server.server.metrics.slowConsumers.load == 0 && sent < 2000 {
            try fast.send(binary: payload + [UInt8(sent % 256)])
            let echoed = try fast.nextMessage()
            #expect(echoed.payload.count == payload.count + 1)
            #expect(echoed.payload.last == UInt8(sent % 256))
            sent += 1
        }
        #expect(server.server.metrics.slowConsumers.load == 1)
        for index in 0..<20 {  // the fast reader keeps receiving after the cut-off
            try fast.send(binary: [UInt8(index)])
            #expect(try fast.nextMessage() == .binary([UInt8(index)]))
        }
        var closedBySlowConsumer: UInt64 = 0
        for _ in 0..<100 where closedBySlowConsumer == 0 {
            closedBySlowConsumer = server.server.metrics.closedByReason["slow_consumer"]?.load ?? 0
            usleep(20_000)
        }
        #expect(closedBySlowConsumer == 1)
        _ = slow  // never read until now: the server must have closed it
    }

    @Test("TLS handshake and echo over WSS")
    func secureEcho() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try generateCertificate(into: directory.path)
        let server = try TestServer {
            $0.tls = TLSListenerConfiguration(
                port: 0, certificatePath: directory.path + "/cert.pem", privateKeyPath: directory.path + "/key.pem")
        }
        defer { server.stop() }
        let context = try TLSContext.client(trustedCAPath: directory.path + "/cert.pem")
        let client = try TestWebSocketClient(port: try #require(server.tlsPort), tls: context)
        try client.send(text: "secret")
        #expect(try client.nextMessage() == .text(Array("secret".utf8)))
    }

    private func generateCertificate(into directory: String) throws {
        let process = Process()
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        process.executableURL = root.appendingPathComponent("scripts/gen-test-certs")
        process.arguments = [directory]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }
}
