import TestSupport
import TLS
import Testing

@Suite("TLSSession failures")
struct TLSSessionFailureTests {
    /// A kilobyte of seeded noise.
    static let randomGarbage: [UInt8] = {
        var random = SplitMix64(seed: 99)
        return random.bytes(1_000)
    }()

    @Test("a client that does not trust the server's issuer fails verification")
    func wrongCA() throws {
        let serverIdentity = try CertificateFixture()
        defer { serverIdentity.remove() }
        let otherIdentity = try CertificateFixture()
        defer { otherIdentity.remove() }
        var link = InMemoryLink(
            client: try TLSSession(context: otherIdentity.clientContext(), serverName: "localhost"),
            server: try TLSSession(context: serverIdentity.serverContext()))
        let error = #expect(throws: TLSError.self) { try link.handshake() }
        guard case .certificateVerificationFailed(let reason) = error else {
            Issue.record("expected a verification failure, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("self-signed"))
        #expect(!link.client.isHandshakeComplete)
        // The client tells the server why (a fatal alert); the server fails too.
        let alert = try #require(link.client.takeCiphertext())
        #expect(throws: TLSError.self) { try link.server.receive(alert) }
    }

    @Test(
        "a name the certificate does not carry fails verification",
        arguments: ["example.com", "localhost.example", "10.0.0.1", "::2"])
    func wrongServerName(serverName: String) throws {
        let fixture = try CertificateFixture()
        defer { fixture.remove() }
        var link = InMemoryLink(
            client: try TLSSession(context: fixture.clientContext(), serverName: serverName),
            server: try TLSSession(context: fixture.serverContext()))
        let error = #expect(throws: TLSError.self) { try link.handshake() }
        guard case .certificateVerificationFailed(let reason) = error else {
            Issue.record("expected a verification failure, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("mismatch"))
    }

    @Test("a client that does not verify accepts a certificate nobody trusts")
    func verificationDisabled() throws {
        let fixture = try CertificateFixture()
        defer { fixture.remove() }
        var link = InMemoryLink(
            client: try TLSSession(context: TLSContext.client(trustedCAPath: nil, verifyPeer: false)),
            server: try TLSSession(context: fixture.serverContext()))
        try link.handshake()
        #expect(link.client.isHandshakeComplete)
    }

    @Test(
        "a client limited to an outdated protocol version is refused",
        arguments: [TLSProtocolVersion.tls1_0, .tls1_1])
    func outdatedClientIsRefused(version: TLSProtocolVersion) throws {
        let fixture = try CertificateFixture()
        defer { fixture.remove() }
        let client = try TLSSession(context: TLSContext.clientForTesting(maximumProtocolVersion: version))
        let server = try TLSSession(context: fixture.serverContext())
        try client.startHandshake()
        let clientHello = try #require(client.takeCiphertext())
        let serverError = #expect(throws: TLSError.self) { try server.receive(clientHello) }
        guard case .handshakeFailed(let reason) = serverError else {
            Issue.record("expected a handshake failure, got \(String(describing: serverError))")
            return
        }
        #expect(reason.contains("unsupported protocol"))
        // The server's protocol_version alert (RFC 8446 §6.2) reaches the client.
        let alert = try #require(server.takeCiphertext())
        let clientError = #expect(throws: TLSError.self) { try client.receive(alert) }
        guard case .handshakeFailed(let clientReason) = clientError else {
            Issue.record("expected a handshake failure, got \(String(describing: clientError))")
            return
        }
        #expect(clientReason.contains("protocol version"))
    }

    @Test(
        "a plain HTTP request to the TLS port is recognised",
        arguments: ["GET / HTTP/1.1\r\nHost: x\r\n\r\n", "POST /a.json HTTP/1.1\r\n", "CONNECT x:443 HTTP/1.1\r\n"])
    func plaintextHTTP(request: String) throws {
        let fixture = try CertificateFixture()
        defer { fixture.remove() }
        let server = try TLSSession(context: fixture.serverContext())
        #expect(throws: TLSError.plaintextHTTPRequest) { try server.receive(Array(request.utf8)) }
        // The session stays dead: later input gets the same error, and writes are refused.
        #expect(throws: TLSError.plaintextHTTPRequest) { try server.receive([0x16, 0x03, 0x01]) }
        #expect(throws: TLSError.plaintextHTTPRequest) { try server.write([1]) }
        #expect(!server.isHandshakeComplete)
    }

    @Test(
        "garbage instead of a ClientHello is an error value, whole or byte by byte",
        arguments: [
            [UInt8](repeating: 0, count: 64),
            [0x16, 0x03, 0x01, 0xFF, 0xFF] + [UInt8](repeating: 0xAB, count: 300),
            [0x16, 0x03, 0x01, 0x00, 0x04, 0x01, 0x00, 0x00, 0x00],
            [0x17, 0x03, 0x03, 0x00, 0x10] + [UInt8](repeating: 0x55, count: 16),
            Self.randomGarbage,
        ] as [[UInt8]],
        [true, false])
    func garbageToServer(garbage: [UInt8], byteByByte: Bool) throws {
        let fixture = try CertificateFixture()
        defer { fixture.remove() }
        let server = try TLSSession(context: fixture.serverContext())
        let error = #expect(throws: TLSError.self) {
            if byteByByte {
                for byte in garbage { _ = try server.receive([byte]) }
            } else {
                _ = try server.receive(garbage)
            }
        }
        guard case .handshakeFailed(let reason) = error else {
            Issue.record("expected a handshake failure, got \(String(describing: error))")
            return
        }
        #expect(!reason.isEmpty)
    }

    @Test("garbage instead of a ServerHello is an error value for the client")
    func garbageToClient() throws {
        let client = try TLSSession(context: TLSContext.client(trustedCAPath: nil, verifyPeer: false))
        try client.startHandshake()
        #expect(client.takeCiphertext() != nil)
        let error = #expect(throws: TLSError.self) { try client.receive(Array("HTTP/1.1 400 Bad Request\r\n".utf8)) }
        guard case .handshakeFailed = error else {
            Issue.record("expected a handshake failure, got \(String(describing: error))")
            return
        }
    }

    @Test("a tampered record after the handshake fails authentication and queues an alert")
    func tamperedRecord() throws {
        let fixture = try CertificateFixture()
        defer { fixture.remove() }
        var link = InMemoryLink(
            client: try TLSSession(context: fixture.clientContext(), serverName: "localhost"),
            server: try TLSSession(context: fixture.serverContext()))
        try link.handshake()
        try link.client.write(Array("hello".utf8))
        var record = try #require(link.client.takeCiphertext())
        record[record.count - 1] ^= 0x01
        let error = #expect(throws: TLSError.self) { try link.server.receive(record) }
        guard case .openSSL(let reason) = error else {
            Issue.record("expected an OpenSSL record error, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("bad record mac") || reason.contains("decryption failed"))
        #expect(link.server.hasPendingCiphertext)
        #expect(throws: TLSError.self) { try link.server.write([1]) }
    }

    @Test("a server name with a NUL byte is refused")
    func serverNameWithNUL() throws {
        let context = try TLSContext.client(trustedCAPath: nil)
        #expect(throws: TLSError.invalidServerName("local\u{0}host")) {
            _ = try TLSSession(context: context, serverName: "local\u{0}host")
        }
    }
}
