import TLS
import Testing

@Suite("TLSContext")
struct TLSContextTests {
    @Test("server and client contexts accept TLS 1.2 and newer only")
    func protocolVersionBounds() throws {
        let fixture = try CertificateFixture()
        defer { fixture.remove() }
        for context in [try fixture.serverContext(), try fixture.clientContext()] {
            #expect(context.minimumProtocolVersion == .tls1_2)
            #expect(context.maximumProtocolVersion == nil)
        }
        #expect(try fixture.serverContext().role == .server)
        #expect(try fixture.clientContext().role == .client)
    }

    @Test("a missing certificate chain file is reported with its path")
    func missingCertificate() throws {
        let fixture = try CertificateFixture()
        defer { fixture.remove() }
        let path = fixture.certificatePath + ".absent"
        let error = #expect(throws: TLSError.self) {
            _ = try TLSContext.server(certificateChainPath: path, privateKeyPath: fixture.privateKeyPath)
        }
        guard case .invalidCertificateChain(let reportedPath, let reason) = error else {
            Issue.record("expected invalidCertificateChain, got \(String(describing: error))")
            return
        }
        #expect(reportedPath == path)
        #expect(!reason.isEmpty)
    }

    @Test("a private key that is not PEM is reported with its path")
    func unreadableKey() throws {
        let fixture = try CertificateFixture()
        defer { fixture.remove() }
        // A certificate is PEM, but not a key.
        let error = #expect(throws: TLSError.self) {
            _ = try TLSContext.server(
                certificateChainPath: fixture.certificatePath, privateKeyPath: fixture.certificatePath)
        }
        guard case .invalidPrivateKey(let path, _) = error else {
            Issue.record("expected invalidPrivateKey, got \(String(describing: error))")
            return
        }
        #expect(path == fixture.certificatePath)
    }

    @Test("a private key that belongs to another certificate is refused")
    func mismatchedKey() throws {
        let first = try CertificateFixture()
        defer { first.remove() }
        let second = try CertificateFixture()
        defer { second.remove() }
        let error = #expect(throws: TLSError.self) {
            _ = try TLSContext.server(
                certificateChainPath: first.certificatePath, privateKeyPath: second.privateKeyPath)
        }
        guard case .invalidPrivateKey(let path, let reason) = error else {
            Issue.record("expected invalidPrivateKey, got \(String(describing: error))")
            return
        }
        #expect(path == second.privateKeyPath)
        #expect(reason.contains("values mismatch") || reason.contains("does not match"))
    }

    @Test("a missing trusted CA file is reported with its path")
    func missingTrustedCA() throws {
        let error = #expect(throws: TLSError.self) {
            _ = try TLSContext.client(trustedCAPath: "/nonexistent/ca.pem")
        }
        guard case .invalidTrustedCA(let path, _) = error else {
            Issue.record("expected invalidTrustedCA, got \(String(describing: error))")
            return
        }
        #expect(path == "/nonexistent/ca.pem")
    }
}

@Suite("ALPN selection")
struct ApplicationProtocolSelectionTests {
    private func offset(in list: [UInt8]) -> Int? {
        list.withUnsafeBufferPointer { TLSContext.offsetOfApplicationProtocol(in: $0) }
    }

    private func entry(_ name: String) -> [UInt8] { [UInt8(name.utf8.count)] + Array(name.utf8) }

    @Test("http/1.1 is found wherever the client lists it")
    func found() {
        #expect(offset(in: entry("http/1.1")) == 1)
        #expect(offset(in: entry("h2") + entry("http/1.1")) == 4)
        #expect(offset(in: entry("h2") + entry("http/1.1") + entry("spdy/3")) == 4)
    }

    @Test(
        "lists without http/1.1, or malformed ones, select nothing",
        arguments: [
            [], [0], [8], [8, 0x68, 0x74], [2, 0x68, 0x32], [0, 8] + Array("http/1.1".utf8),
            [9] + Array("http/1.1".utf8), [7] + Array("http/1.".utf8), [9] + Array("http/1.1x".utf8),
        ] as [[UInt8]])
    func notFound(list: [UInt8]) {
        #expect(offset(in: list) == nil)
    }
}
