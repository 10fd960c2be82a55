import COpenSSL

/// Immutable OpenSSL configuration (an `SSL_CTX`) from which ``TLSSession``s are made.
///
/// One context serves a whole listener (or a whole load-test client): it holds the certificate, key, trust store,
/// protocol versions and cipher policy. It is never changed after the factory method returns, and OpenSSL allows
/// `SSL_new` on a shared `SSL_CTX` from any thread, hence `@unchecked Sendable`.
///
/// Policy, for both roles: TLS 1.2 and 1.3 only (RFC 8996 deprecates 1.0 and 1.1), TLS 1.2 restricted to
/// ECDHE with AEAD ciphers (Mozilla's "intermediate" list without DHE), TLS 1.3 with OpenSSL's default suites,
/// no renegotiation (RFC 5746 renegotiation is a CPU-exhaustion vector and TLS 1.3 dropped it), no compression
/// (CRIME). ALPN (RFC 7301) offers and accepts "http/1.1"; a client that offers no ALPN, or only other
/// protocols, is still served, just without ALPN.
public final class TLSContext: @unchecked Sendable {
    /// Which side of the handshake the sessions made from a context play.
    public enum Role: Sendable {
        /// Sessions wait for a ClientHello (`SSL_set_accept_state`).
        case server
        /// Sessions send the ClientHello (`SSL_set_connect_state`).
        case client
    }

    /// The role of every session made from this context.
    public let role: Role

    /// The `SSL_CTX`; configured only inside the factory methods, immutable afterwards.
    let handle: OpaquePointer

    /// The oldest protocol version either role accepts.
    static let minimumSupportedVersion = TLSProtocolVersion.tls1_2

    /// TLS 1.2 suites, strongest key exchange and AEAD only (TLS 1.3 suites are configured separately by OpenSSL).
    static let tls12CipherList = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
        "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
        "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    /// The ALPN protocol name both roles use (RFC 7301 §6 registry).
    static let applicationProtocol: [UInt8] = Array("http/1.1".utf8)

    private init(role: Role) throws {
        OpenSSLErrorQueue.clear()
        let method = role == .server ? TLS_server_method() : TLS_client_method()
        guard let handle = SSL_CTX_new(method) else {
            throw TLSError.openSSL(OpenSSLErrorQueue.drain(fallback: "SSL_CTX_new failed").message)
        }
        self.role = role
        self.handle = handle
    }

    deinit {
        SSL_CTX_free(handle)
    }

    // MARK: - Factories

    /// Makes a server context that presents the given certificate chain and key.
    ///
    /// - Parameters:
    ///   - certificateChainPath: PEM file with the leaf certificate first, then any intermediates.
    ///   - privateKeyPath: PEM file with the leaf's unencrypted private key.
    /// - Throws: ``TLSError/invalidCertificateChain(path:reason:)`` or ``TLSError/invalidPrivateKey(path:reason:)``
    ///   (including when the key does not belong to the certificate).
    public static func server(certificateChainPath: String, privateKeyPath: String) throws -> TLSContext {
        let context = try TLSContext(role: .server)
        try context.applyCommonPolicy()
        guard SSL_CTX_use_certificate_chain_file(context.handle, certificateChainPath) == 1 else {
            let reason = OpenSSLErrorQueue.drain(fallback: "unreadable").message
            throw TLSError.invalidCertificateChain(path: certificateChainPath, reason: reason)
        }
        guard SSL_CTX_use_PrivateKey_file(context.handle, privateKeyPath, SSL_FILETYPE_PEM) == 1 else {
            let reason = OpenSSLErrorQueue.drain(fallback: "unreadable").message
            throw TLSError.invalidPrivateKey(path: privateKeyPath, reason: reason)
        }
        guard SSL_CTX_check_private_key(context.handle) == 1 else {
            let reason = OpenSSLErrorQueue.drain(fallback: "does not match the certificate").message
            throw TLSError.invalidPrivateKey(path: privateKeyPath, reason: reason)
        }
        SSL_CTX_set_alpn_select_cb(context.handle, selectApplicationProtocol, nil)
        return context
    }

    /// Makes a client context, for tests and the load tester.
    ///
    /// - Parameters:
    ///   - trustedCAPath: PEM file of the certificates to trust; `nil` uses the system's default trust store.
    ///   - verifyPeer: whether the server's certificate (and, when the session has a server name, its host name)
    ///     must verify; `false` accepts anything and is meant only for benchmarks against self-signed servers.
    /// - Throws: ``TLSError/invalidTrustedCA(path:reason:)`` if the file cannot be loaded.
    public static func client(trustedCAPath: String?, verifyPeer: Bool = true) throws -> TLSContext {
        let context = try TLSContext(role: .client)
        try context.applyCommonPolicy()
        if let trustedCAPath {
            guard SSL_CTX_load_verify_locations(context.handle, trustedCAPath, nil) == 1 else {
                let reason = OpenSSLErrorQueue.drain(fallback: "unreadable").message
                throw TLSError.invalidTrustedCA(path: trustedCAPath, reason: reason)
            }
        } else if SSL_CTX_set_default_verify_paths(context.handle) != 1 {
            throw TLSError.openSSL(OpenSSLErrorQueue.drain(fallback: "no default trust store").message)
        }
        SSL_CTX_set_verify(context.handle, verifyPeer ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nil)
        try context.offerApplicationProtocol()
        return context
    }

    /// Makes a client context for fetching documents over HTTPS (``HTTPSClient``): peers are verified against the
    /// system's trust store and, when `additionalTrustedCAPath` is set, the certificates of that PEM file as well
    /// (a private CA, or a test's own).
    ///
    /// - Throws: ``TLSError/invalidTrustedCA(path:reason:)`` if the file cannot be loaded, ``TLSError/openSSL(_:)``
    ///   if the system store cannot be configured.
    public static func httpsClient(additionalTrustedCAPath: String?) throws -> TLSContext {
        let context = try TLSContext(role: .client)
        try context.applyCommonPolicy()
        guard SSL_CTX_set_default_verify_paths(context.handle) == 1 else {
            throw TLSError.openSSL(OpenSSLErrorQueue.drain(fallback: "no default trust store").message)
        }
        if let additionalTrustedCAPath {
            guard SSL_CTX_load_verify_locations(context.handle, additionalTrustedCAPath, nil) == 1 else {
                let reason = OpenSSLErrorQueue.drain(fallback: "unreadable").message
                throw TLSError.invalidTrustedCA(path: additionalTrustedCAPath, reason: reason)
            }
        }
        SSL_CTX_set_verify(context.handle, SSL_VERIFY_PEER, nil)
        try context.offerApplicationProtocol()
        return context
    }

    /// Makes a client that speaks at most `maximumProtocolVersion`, with no lower bound, and verifies nothing, so
    /// tests can pin TLS 1.2 or check that a server refuses outdated peers. OpenSSL 3 will not even offer TLS below
    /// 1.2 above security level 0, so this context drops to level 0; never use it outside tests.
    package static func clientForTesting(maximumProtocolVersion: TLSProtocolVersion) throws -> TLSContext {
        let context = try TLSContext(role: .client)
        guard COpenSSL_SSL_CTX_set_max_proto_version(context.handle, maximumProtocolVersion.rawValue) == 1,
            SSL_CTX_set_cipher_list(context.handle, "DEFAULT:@SECLEVEL=0") == 1
        else {
            throw TLSError.openSSL(OpenSSLErrorQueue.drain(fallback: "cannot configure outdated client").message)
        }
        SSL_CTX_set_verify(context.handle, SSL_VERIFY_NONE, nil)
        return context
    }

    // MARK: - Read-back

    /// The oldest protocol version sessions accept; `nil` if OpenSSL's own lower bound applies.
    public var minimumProtocolVersion: TLSProtocolVersion? {
        TLSProtocolVersion(rawValue: Int32(truncatingIfNeeded: COpenSSL_SSL_CTX_get_min_proto_version(handle)))
    }

    /// The newest protocol version sessions accept; `nil` means the newest OpenSSL knows (TLS 1.3 today).
    public var maximumProtocolVersion: TLSProtocolVersion? {
        TLSProtocolVersion(rawValue: Int32(truncatingIfNeeded: COpenSSL_SSL_CTX_get_max_proto_version(handle)))
    }

    // MARK: - Configuration (factories only)

    /// Versions, suites, options and modes shared by both roles.
    ///
    /// Modes: partial writes so a large `SSL_write` reports progress record by record, a moving write buffer so
    /// a retried write may come from a reallocated buffer, and released buffers so an idle session does not keep
    /// OpenSSL's ~34 KiB of record buffers.
    private func applyCommonPolicy() throws {
        guard COpenSSL_SSL_CTX_set_min_proto_version(handle, Self.minimumSupportedVersion.rawValue) == 1,
            SSL_CTX_set_cipher_list(handle, Self.tls12CipherList) == 1
        else {
            throw TLSError.openSSL(OpenSSLErrorQueue.drain(fallback: "cannot set protocol policy").message)
        }
        _ = SSL_CTX_set_options(handle, COpenSSL_SSL_OP_NO_RENEGOTIATION | COpenSSL_SSL_OP_NO_COMPRESSION)
        let modes = SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS
        _ = COpenSSL_SSL_CTX_set_mode(handle, Int(modes))
    }

    /// Makes client sessions offer "http/1.1" in ALPN.
    private func offerApplicationProtocol() throws {
        let wire = [UInt8(Self.applicationProtocol.count)] + Self.applicationProtocol
        // Unlike most of OpenSSL, this returns 0 on success.
        guard SSL_CTX_set_alpn_protos(handle, wire, UInt32(wire.count)) == 0 else {
            throw TLSError.openSSL(OpenSSLErrorQueue.drain(fallback: "cannot set ALPN").message)
        }
    }
}
