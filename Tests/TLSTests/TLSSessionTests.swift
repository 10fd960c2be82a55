import TestSupport
import Dispatch
import Synchronization
import TLS
import Testing

@Suite("TLSSession")
struct TLSSessionTests {
    /// Runs `body` with a fresh identity and a client/server pair that trusts it.
    private func withLink(
        delivery: Delivery = .whole, serverName: String? = "localhost",
        _ body: (inout InMemoryLink) throws -> Void
    ) throws {
        let fixture = try CertificateFixture()
        defer { fixture.remove() }
        let server = try TLSSession(context: fixture.serverContext())
        let client = try TLSSession(context: fixture.clientContext(), serverName: serverName)
        var link = InMemoryLink(client: client, server: server, delivery: delivery)
        try body(&link)
    }

    @Test("a client and a server complete the handshake in memory and agree on TLS 1.3 and http/1.1")
    func handshakeCompletes() throws {
        try withLink { link in
            #expect(!link.client.isHandshakeComplete && !link.server.isHandshakeComplete)
            #expect(link.client.negotiatedProtocolVersion == nil)
            try link.handshake()
            #expect(link.client.isHandshakeComplete && link.server.isHandshakeComplete)
            #expect(link.client.negotiatedProtocolVersion == .tls1_3)
            #expect(link.server.negotiatedProtocolVersion == .tls1_3)
            #expect(link.client.negotiatedApplicationProtocol == "http/1.1")
            #expect(link.server.negotiatedApplicationProtocol == "http/1.1")
            #expect(link.receivedByClient.isEmpty && link.receivedByServer.isEmpty)
            #expect(!link.client.hasPendingCiphertext && !link.server.hasPendingCiphertext)
        }
    }

    @Test("a server session says nothing until the ClientHello arrives")
    func serverWaitsForClientHello() throws {
        try withLink { link in
            try link.server.startHandshake()
            #expect(link.server.takeCiphertext() == nil)
            try link.client.startHandshake()
            #expect(link.client.hasPendingCiphertext)
        }
    }

    @Test(
        "payloads echo intact from client to server and back",
        arguments: [1, 16_383, 16_384, 16_385, 1 << 20])
    func echoFromClient(size: Int) throws {
        try withLink { link in
            try link.handshake()
            var random = SplitMix64(seed: UInt64(size))
            let payload = random.bytes(size)
            try link.client.write(payload)
            try link.pump()
            #expect(link.receivedByServer == payload)
            try link.server.write(link.receivedByServer)
            try link.pump()
            #expect(link.receivedByClient == payload)
        }
    }

    @Test(
        "payloads echo intact from server to client and back",
        arguments: [1, 16_385, 1 << 20])
    func echoFromServer(size: Int) throws {
        try withLink { link in
            try link.handshake()
            var random = SplitMix64(seed: UInt64(size) &+ 7)
            let payload = random.bytes(size)
            try link.server.write(payload)
            try link.pump()
            #expect(link.receivedByClient == payload)
            try link.client.write(link.receivedByClient)
            try link.pump()
            #expect(link.receivedByServer == payload)
        }
    }

    @Test(
        "handshake, data and close_notify survive any split of the ciphertext",
        arguments: [Delivery.whole, .oneByte, .randomSplits(seed: 1), .randomSplits(seed: 2), .randomSplits(seed: 3)])
    func dripFeed(delivery: Delivery) throws {
        try withLink(delivery: delivery) { link in
            try link.handshake()
            #expect(link.client.isHandshakeComplete && link.server.isHandshakeComplete)
            let request = Array("GET /.health HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)
            let response = Array(repeating: UInt8(ascii: "x"), count: 20_000)
            try link.client.write(request)
            try link.pump()
            try link.server.write(response)
            try link.pump()
            #expect(link.receivedByServer == request)
            #expect(link.receivedByClient == response)
            link.client.close()
            try link.pump()
            #expect(link.server.peerClosed)
        }
    }

    @Test("plaintext written before the handshake is buffered and delivered once it completes")
    func writesBeforeHandshakeAreBuffered() throws {
        try withLink { link in
            let early = Array("early request".utf8)
            try link.client.write(early)
            try link.server.write(Array("early reply".utf8))
            #expect(link.client.bufferedPlaintextCount == early.count)
            try link.handshake()
            #expect(link.client.bufferedPlaintextCount == 0 && link.server.bufferedPlaintextCount == 0)
            #expect(link.receivedByServer == early)
            #expect(link.receivedByClient == Array("early reply".utf8))
        }
    }

    @Test("close_notify is observed by the peer, after the data sent before it")
    func closeNotify() throws {
        try withLink { link in
            try link.handshake()
            try link.client.write(Array("bye".utf8))
            link.client.close()
            #expect(link.client.hasPendingCiphertext)
            try link.pump()
            #expect(link.receivedByServer == Array("bye".utf8))
            #expect(link.server.peerClosed)
            #expect(!link.client.peerClosed)
            link.server.close()
            try link.pump()
            #expect(link.client.peerClosed)
        }
    }

    @Test("after sending close_notify a session still reads what the peer sends until it closes too")
    func halfClose() throws {
        try withLink { link in
            try link.handshake()
            link.client.close()
            try link.pump()
            try link.server.write(Array("last words".utf8))
            link.server.close()
            try link.pump()
            #expect(link.receivedByClient == Array("last words".utf8))
            #expect(link.client.peerClosed)
        }
    }

    @Test("writing after close is rejected, and closing twice is harmless")
    func writeAfterClose() throws {
        try withLink { link in
            try link.handshake()
            link.client.close()
            link.client.close()
            #expect(throws: TLSError.sessionClosed) { try link.client.write([1, 2, 3]) }
            let closeNotify = try #require(link.client.takeCiphertext())
            #expect(link.client.takeCiphertext() == nil)
            #expect(try link.server.receive(closeNotify).isEmpty)
            #expect(link.server.peerClosed)
        }
    }

    @Test("closing before the handshake completes drops buffered plaintext and sends nothing")
    func closeBeforeHandshake() throws {
        try withLink { link in
            try link.client.write([1, 2, 3])
            link.client.close()
            #expect(link.client.bufferedPlaintextCount == 0)
            #expect(link.client.takeCiphertext() == nil)
        }
    }

    @Test("an empty write and empty ciphertext are no-ops")
    func emptyInputs() throws {
        try withLink { link in
            try link.handshake()
            try link.client.write([])
            #expect(link.client.takeCiphertext() == nil)
            #expect(try link.server.receive([]).isEmpty)
        }
    }

    @Test(
        "the certificate's host names and IP addresses verify",
        arguments: ["localhost", "127.0.0.1", "::1"])
    func serverNamesThatMatch(serverName: String) throws {
        try withLink(serverName: serverName) { link in
            try link.handshake()
            #expect(link.client.isHandshakeComplete)
        }
    }

    @Test("a session without a server name verifies the chain but not the name")
    func noServerName() throws {
        try withLink(serverName: nil) { link in
            try link.handshake()
            #expect(link.client.isHandshakeComplete)
        }
    }

    @Test(
        "TLS 1.2 and TLS 1.3 peers are served and exchange data",
        arguments: [TLSProtocolVersion.tls1_2, .tls1_3])
    func cappedClientVersions(version: TLSProtocolVersion) throws {
        let fixture = try CertificateFixture()
        defer { fixture.remove() }
        let context = try TLSContext.clientForTesting(maximumProtocolVersion: version)
        var link = InMemoryLink(
            client: try TLSSession(context: context), server: try TLSSession(context: fixture.serverContext()))
        try link.handshake()
        #expect(link.server.negotiatedProtocolVersion == version)
        try link.client.write([42])
        try link.pump()
        #expect(link.receivedByServer == [42])
    }

    @Test("one context serves sessions on many threads at once")
    func sharedContextAcrossThreads() throws {
        let fixture = try CertificateFixture()
        defer { fixture.remove() }
        let serverContext = try fixture.serverContext()
        let clientContext = try fixture.clientContext()
        let pairs = 8
        let succeeded = Mutex([Bool](repeating: false, count: pairs))
        DispatchQueue.concurrentPerform(iterations: pairs) { index in
            let payload = [UInt8](repeating: UInt8(index), count: 40_000)
            let echoed: Bool
            do {
                var link = InMemoryLink(
                    client: try TLSSession(context: clientContext, serverName: "localhost"),
                    server: try TLSSession(context: serverContext))
                try link.handshake()
                try link.client.write(payload)
                try link.pump()
                try link.server.write(link.receivedByServer)
                try link.pump()
                echoed = link.receivedByClient == payload
            } catch {
                echoed = false
            }
            succeeded.withLock { $0[index] = echoed }
        }
        #expect(succeeded.withLock { $0 } == [Bool](repeating: true, count: pairs))
    }
}
