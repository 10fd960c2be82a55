import COpenSSL
import Primitives

#if canImport(Glibc)
import Glibc
#endif

/// One TLS connection's state: an OpenSSL `SSL` between two memory BIOs, driven purely by bytes in and bytes out.
///
/// The session never touches a socket. The transport feeds it what arrives from the network with
/// ``receivedCiphertext(_:)``, which returns decrypted application data; the application hands it data to send with
/// ``writePlaintext(_:)``; and after **every** call (including ``startHandshake()``, ``close()`` and a call that
/// threw) the transport asks ``takeCiphertext()`` for what must go on the wire now: handshake messages, records,
/// session tickets, alerts.
///
/// ```
///  network ──ciphertext──▶ receivedCiphertext ──▶ [input BIO] ──▶ SSL ──▶ plaintext (returned)
///  app ──plaintext──▶ writePlaintext ──▶ SSL ──▶ [output BIO] ──▶ takeCiphertext ──ciphertext──▶ network
/// ```
///
/// Writes before the handshake completes are **buffered**, not rejected: they are encrypted and queued as soon as
/// the handshake finishes (so a client may write its HTTP upgrade request right after ``startHandshake()``). The
/// buffer is the caller's memory; ``bufferedPlaintextCount`` reports it so the transport can apply its own limits.
///
/// Once a call throws, the session is dead: every later call rethrows the same error, and the transport should
/// send whatever ``takeCiphertext()`` still returns (usually a fatal alert, RFC 8446 §6.2) and close the socket.
///
/// Not `Sendable`: a session belongs to its connection's serial queue and is only touched there.
public final class TLSSession {
    /// The configuration this session was made from; kept alive as long as the session.
    public let context: TLSContext

    /// The OpenSSL connection; owns both memory BIOs (`SSL_set0_rbio` / `SSL_set0_wbio`).
    private let ssl: OpaquePointer

    /// Plaintext accepted by ``writePlaintext(_:)`` but not yet encrypted: everything written before the
    /// handshake completed, or the tail of a write OpenSSL could not finish (`SSL_ERROR_WANT_READ`).
    private var pendingPlaintext = ByteBuffer()

    /// The error that killed the session, rethrown by every later call.
    private var failure: TLSError?

    /// Whether ``close()`` was called.
    private var isClosedLocally = false

    /// Whether the handshake has finished; application data flows only afterwards.
    public private(set) var isHandshakeComplete = false

    /// A memory BIO that once held more than this many bytes is replaced once drained, because OpenSSL's memory
    /// BIOs never shrink: without this, one 1 MiB message would pin 1 MiB per connection for its lifetime.
    static let maxRetainedBIOBytes = 65_536

    /// Makes a session that plays the context's role.
    ///
    /// - Parameters:
    ///   - context: the shared configuration; a server context makes a server session, a client one a client.
    ///   - serverName: clients only. A DNS name is sent as SNI (RFC 6066 §3) and checked against the certificate
    ///     (no partial wildcards); an IP address literal (`127.0.0.1`, `::1`, without brackets) is not sent, as
    ///     RFC 6066 forbids, and is checked against the certificate's IP SANs. `nil` skips the name check: the
    ///     chain is then verified but any name is accepted.
    /// - Throws: ``TLSError/invalidServerName(_:)`` for a name OpenSSL refuses, ``TLSError/openSSL(_:)`` if
    ///   OpenSSL cannot allocate.
    public init(context: TLSContext, serverName: String? = nil) throws {
        precondition(serverName == nil || context.role == .client, "only client sessions take a server name")
        OpenSSLErrorQueue.clear()
        guard let ssl = SSL_new(context.handle) else {
            throw TLSError.openSSL(OpenSSLErrorQueue.drain(fallback: "SSL_new failed").message)
        }
        self.context = context
        self.ssl = ssl
        // From here on, deinit frees `ssl` (and the BIOs it took) if anything below throws.
        guard let input = BIO_new(BIO_s_mem()) else {
            throw TLSError.openSSL(OpenSSLErrorQueue.drain(fallback: "BIO_new failed").message)
        }
        SSL_set0_rbio(ssl, input)
        guard let output = BIO_new(BIO_s_mem()) else {
            throw TLSError.openSSL(OpenSSLErrorQueue.drain(fallback: "BIO_new failed").message)
        }
        SSL_set0_wbio(ssl, output)
        switch context.role {
        case .server:
            SSL_set_accept_state(ssl)
        case .client:
            SSL_set_connect_state(ssl)
            if let serverName { try expect(serverName: serverName) }
        }
    }

    deinit {
        SSL_free(ssl)
    }

    // MARK: - State

    /// Whether the peer's close_notify alert has arrived (RFC 8446 §6.1): no more application data will come.
    public var peerClosed: Bool {
        SSL_get_shutdown(ssl) & SSL_RECEIVED_SHUTDOWN != 0
    }

    /// The protocol version agreed in the handshake, or `nil` before it completes.
    public var negotiatedProtocolVersion: TLSProtocolVersion? {
        isHandshakeComplete ? TLSProtocolVersion(rawValue: SSL_version(ssl)) : nil
    }

    /// The ALPN protocol agreed in the handshake (RFC 7301), e.g. "http/1.1", or `nil` if none was.
    public var negotiatedApplicationProtocol: String? {
        var name: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &name, &length)
        guard let name, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: name, count: Int(length)), as: UTF8.self)
    }

    /// Plaintext accepted by ``writePlaintext(_:)`` and not yet encrypted, in bytes (normally non-zero only
    /// before the handshake completes).
    public var bufferedPlaintextCount: Int { pendingPlaintext.readableCount }

    /// Whether ``takeCiphertext()`` would return bytes.
    public var hasPendingCiphertext: Bool { BIO_ctrl_pending(SSL_get_wbio(ssl)) > 0 }

    // MARK: - Driving the session

    /// Starts the handshake: a client session produces its ClientHello (fetch it with ``takeCiphertext()``);
    /// a server session has nothing to say until the ClientHello arrives, so this does nothing for it.
    ///
    /// Calling it is optional for clients too (the first ``receivedCiphertext(_:)`` would start the handshake), but
    /// a client speaks first, so without it nothing happens.
    /// - Throws: the session's ``TLSError`` if the handshake cannot start or the session already failed.
    public func startHandshake() throws {
        if let failure { throw failure }
        guard !isHandshakeComplete else { return }
        OpenSSLErrorQueue.clear()
        try advanceHandshake()
    }

    /// Feeds ciphertext from the network, advances the handshake, and returns the application data it decrypted.
    ///
    /// Any split of the byte stream is accepted, down to one byte per call; incomplete records are kept until the
    /// rest arrives. The result is empty while the handshake runs, when only part of a record arrived, or when the
    /// bytes carried only protocol messages (tickets, close_notify: check ``peerClosed``). Afterwards call
    /// ``takeCiphertext()``: the input may have produced handshake replies, or let buffered writes go out.
    /// - Parameter bytes: ciphertext exactly as received; the bytes are copied before this returns.
    /// - Returns: the decrypted application data, possibly empty.
    /// - Throws: ``TLSError/plaintextHTTPRequest``, ``TLSError/certificateVerificationFailed(_:)``,
    ///   ``TLSError/handshakeFailed(_:)`` or ``TLSError/openSSL(_:)``; the session is dead afterwards.
    public func receivedCiphertext(_ bytes: UnsafeRawBufferPointer) throws -> [UInt8] {
        if let failure { throw failure }
        OpenSSLErrorQueue.clear()
        try feed(bytes)
        var plaintext: [UInt8] = []
        if !isHandshakeComplete {
            try advanceHandshake()
        }
        if isHandshakeComplete {
            try decryptAvailable(into: &plaintext)
            try flushPendingPlaintext()
        }
        if bytes.count > Self.maxRetainedBIOBytes, BIO_ctrl_pending(SSL_get_rbio(ssl)) == 0,
            let fresh = BIO_new(BIO_s_mem())
        {
            SSL_set0_rbio(ssl, fresh)
        }
        return plaintext
    }

    /// Encrypts application data into records, or buffers it until the handshake completes.
    ///
    /// Any size is accepted: OpenSSL cuts it into records of at most 16 KiB (RFC 8446 §5.1), all of which are
    /// queued for ``takeCiphertext()`` before this returns.
    /// - Parameter bytes: the plaintext; copied or encrypted before this returns.
    /// - Throws: ``TLSError/sessionClosed`` after ``close()``, ``TLSError/openSSL(_:)`` if encryption fails,
    ///   or the error that already killed the session.
    public func writePlaintext(_ bytes: UnsafeRawBufferPointer) throws {
        if let failure { throw failure }
        guard !isClosedLocally else { throw TLSError.sessionClosed }
        guard !bytes.isEmpty else { return }
        guard isHandshakeComplete, pendingPlaintext.isEmpty else {
            pendingPlaintext.append(bytes)
            return
        }
        OpenSSLErrorQueue.clear()
        let written = try encrypt(bytes)
        if written < bytes.count {
            pendingPlaintext.append(UnsafeRawBufferPointer(rebasing: bytes[written...]))
        }
    }

    /// Removes and returns the ciphertext the transport must send now, or `nil` if there is none.
    public func takeCiphertext() -> [UInt8]? {
        let output = SSL_get_wbio(ssl)
        let pending = Int(BIO_ctrl_pending(output))
        guard pending > 0 else { return nil }
        let ciphertext = [UInt8](unsafeUninitializedCapacity: pending) { buffer, initializedCount in
            var read = 0
            if BIO_read_ex(output, buffer.baseAddress, pending, &read) != 1 { read = 0 }
            initializedCount = read
        }
        if pending > Self.maxRetainedBIOBytes, BIO_ctrl_pending(output) == 0, let fresh = BIO_new(BIO_s_mem()) {
            SSL_set0_wbio(ssl, fresh)
        }
        return ciphertext
    }

    /// Queues a close_notify alert (RFC 8446 §6.1) and refuses further writes.
    ///
    /// Send what ``takeCiphertext()`` returns, then close the socket or, to let the peer finish, keep reading:
    /// ``receivedCiphertext(_:)`` still decrypts until the peer's own close_notify sets ``peerClosed``. Before the
    /// handshake completes (or after a failure) there is nothing to protect, so no alert is queued, and plaintext
    /// still buffered is dropped. Calling it again does nothing.
    public func close() {
        guard !isClosedLocally else { return }
        isClosedLocally = true
        pendingPlaintext = ByteBuffer()
        guard isHandshakeComplete, failure == nil else { return }
        OpenSSLErrorQueue.clear()
        // 0 ("sent, peer's not yet seen") and 1 ("both seen") are both fine; nothing can be done about < 0.
        _ = SSL_shutdown(ssl)
        OpenSSLErrorQueue.clear()
    }

    // MARK: - Engine

    /// Configures SNI and the certificate name check for a client (see ``init(context:serverName:)``).
    private func expect(serverName: String) throws {
        guard !serverName.utf8.contains(0) else { throw TLSError.invalidServerName(serverName) }
        if Self.isIPAddressLiteral(serverName) {
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName) == 1 else {
                throw TLSError.invalidServerName(serverName)
            }
        } else {
            guard COpenSSL_SSL_set_tlsext_host_name(ssl, serverName) == 1, SSL_set1_host(ssl, serverName) == 1 else {
                throw TLSError.invalidServerName(serverName)
            }
            SSL_set_hostflags(ssl, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
        }
    }

    /// Whether `name` is an IPv4 or IPv6 address literal rather than a DNS name.
    private static func isIPAddressLiteral(_ name: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET, name, &address) == 1 || inet_pton(AF_INET6, name, &address) == 1
    }

    /// Appends ciphertext to the input BIO, from which OpenSSL reads as it needs.
    private func feed(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        var written = 0
        guard BIO_write_ex(SSL_get_rbio(ssl), base, bytes.count, &written) == 1, written == bytes.count else {
            throw fail(.openSSL(OpenSSLErrorQueue.drain(fallback: "cannot buffer \(bytes.count) bytes").message))
        }
    }

    /// Runs the handshake as far as the input allows. Plaintext written meanwhile is encrypted by the caller,
    /// ``receivedCiphertext(_:)``, after it has decrypted whatever followed the handshake in the same input.
    private func advanceHandshake() throws {
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            isHandshakeComplete = true
            return
        }
        let code = SSL_get_error(ssl, result)
        switch code {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return
        default:
            throw fail(handshakeError(code: code))
        }
    }

    /// Turns a failed handshake into the most specific ``TLSError``.
    private func handshakeError(code: Int32) -> TLSError {
        let drained = OpenSSLErrorQueue.drain(fallback: "handshake failed (SSL_get_error \(code))")
        if drained.reasons.contains(SSL_R_HTTP_REQUEST) || drained.reasons.contains(SSL_R_HTTPS_PROXY_REQUEST) {
            return .plaintextHTTPRequest
        }
        if drained.reasons.contains(SSL_R_CERTIFICATE_VERIFY_FAILED) {
            let reason = String(cString: X509_verify_cert_error_string(SSL_get_verify_result(ssl)))
            return .certificateVerificationFailed(reason)
        }
        return .handshakeFailed(drained.message)
    }

    /// Decrypts every complete record in the input BIO into `plaintext`, a record at a time via the thread's
    /// scratch buffer; stops when OpenSSL needs more input or the peer sent close_notify.
    private func decryptAvailable(into plaintext: inout [UInt8]) throws {
        try ReadScratch.withBuffer { scratch in
            while true {
                var read = 0
                let result = SSL_read_ex(ssl, scratch.baseAddress, scratch.count, &read)
                if result == 1 {
                    plaintext.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<read]))
                    continue
                }
                let code = SSL_get_error(ssl, result)
                switch code {
                case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE, SSL_ERROR_ZERO_RETURN:
                    return
                default:
                    let drained = OpenSSLErrorQueue.drain(fallback: "SSL_read failed (SSL_get_error \(code))")
                    throw fail(.openSSL(drained.message))
                }
            }
        }
    }

    /// Encrypts as much of `bytes` as OpenSSL accepts and returns how many bytes that was.
    ///
    /// With memory BIOs OpenSSL always accepts everything once the handshake is done, since the output BIO
    /// grows; a short count (`SSL_ERROR_WANT_READ`) could only follow a post-handshake exchange the peer must
    /// answer first, and the caller keeps the tail for ``flushPendingPlaintext()`` to retry, as OpenSSL requires.
    private func encrypt(_ bytes: UnsafeRawBufferPointer) throws -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        var offset = 0
        while offset < bytes.count {
            var written = 0
            let result = SSL_write_ex(ssl, base + offset, bytes.count - offset, &written)
            if result == 1 {
                offset += written
                continue
            }
            let code = SSL_get_error(ssl, result)
            switch code {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                return offset
            default:
                let drained = OpenSSLErrorQueue.drain(fallback: "SSL_write failed (SSL_get_error \(code))")
                throw fail(.openSSL(drained.message))
            }
        }
        return offset
    }

    /// Encrypts buffered plaintext once the handshake allows it; releases the buffer's memory when emptied.
    private func flushPendingPlaintext() throws {
        guard isHandshakeComplete, !isClosedLocally, !pendingPlaintext.isEmpty else { return }
        let written = try pendingPlaintext.withUnsafeReadableBytes { try encrypt($0) }
        pendingPlaintext.consume(written)
        if pendingPlaintext.isEmpty {
            pendingPlaintext = ByteBuffer()
        }
    }

    /// Records `error` as the session's fate and returns it for throwing.
    private func fail(_ error: TLSError) -> TLSError {
        failure = error
        pendingPlaintext = ByteBuffer()
        return error
    }
}

/// A session belongs to one connection's serial queue; sharing it across threads would race on OpenSSL state.
@available(*, unavailable)
extension TLSSession: Sendable {}
