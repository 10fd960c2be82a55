#if canImport(Glibc)
import Glibc
#endif

/// A small blocking HTTPS client for fetching documents such as published signing keys: one `GET` per connection,
/// within a deadline and size limits, over this module's ``TLSSession`` on a non-blocking socket.
///
/// ``get(_:)`` blocks its caller until the response is complete or the deadline passes, so call it from a queue of
/// its own, never from an event loop. Every step — connecting (each resolved address in turn), the TLS handshake,
/// sending, reading — waits with `poll` bounded by what is left of ``timeoutSeconds``; only the name lookup
/// (`getaddrinfo`) cannot be bounded and uses the resolver's own timeouts.
///
/// What it refuses: URLs other than `https://`; a peer whose certificate does not verify against the context's
/// trust store or does not name the host; a head over 64 KiB or a body over ``maxBodyBytes``; redirects beyond
/// ``maxRedirects``, or to anything but `https://`.
public struct HTTPSClient: Sendable {
    /// Why a fetch failed; the text is for logs.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case invalidURL(String)
        case resolve(host: String, reason: String)
        case connect(String)
        case tls(TLSError)
        case timedOut(String)
        case io(String)
        case response(String)
        case bodyTooLarge(limit: Int)
        case redirect(String)

        public var description: String {
            switch self {
            case .invalidURL(let url): return "not an https:// URL: \(url.prefix(200))"
            case .resolve(let host, let reason): return "cannot resolve \(host): \(reason)"
            case .connect(let reason): return "cannot connect: \(reason)"
            case .tls(let error): return "TLS: \(error)"
            case .timedOut(let step): return "timed out while \(step)"
            case .io(let reason): return reason
            case .response(let reason): return "bad response: \(reason)"
            case .bodyTooLarge(let limit): return "the response is larger than \(limit) bytes"
            case .redirect(let reason): return "redirect refused: \(reason)"
            }
        }
    }

    /// The TLS configuration (``TLSContext/httpsClient(additionalTrustedCAPath:)``).
    public let context: TLSContext
    /// Seconds one fetch may take in all, redirects included.
    public let timeoutSeconds: Double
    /// Largest body accepted.
    public let maxBodyBytes: Int
    /// Most redirects followed (301, 302, 303, 307, 308 to another `https://` URL).
    public let maxRedirects: Int
    /// The `User-Agent` sent.
    public let userAgent: String

    /// Creates a client.
    public init(context: TLSContext, timeoutSeconds: Double = 10, maxBodyBytes: Int = 1 << 20, maxRedirects: Int = 3,
                userAgent: String = "canopy")
    {
        self.context = context
        self.timeoutSeconds = timeoutSeconds
        self.maxBodyBytes = maxBodyBytes
        self.maxRedirects = maxRedirects
        self.userAgent = userAgent
    }

    /// Fetches `url` with `GET`, following redirects; returns the final response, whatever its status.
    public func get(_ url: String, accept: String = "application/json") throws(Failure) -> HTTPSResponse {
        guard var target = HTTPSURL(url) else { throw .invalidURL(url) }
        let deadline = Self.now() + UInt64(max(0, timeoutSeconds) * 1e9)
        var redirects = 0
        while true {
            let response = try fetch(target, accept: accept, deadline: deadline)
            guard [301, 302, 303, 307, 308].contains(response.status) else { return response }
            guard redirects < maxRedirects else { throw .redirect("more than \(maxRedirects) redirects") }
            guard let location = response.header("Location"), let next = target.resolving(location) else {
                throw .redirect("status \(response.status) to a location that is not an https:// URL")
            }
            redirects += 1
            target = next
        }
    }

    // MARK: - One request

    private func fetch(_ url: HTTPSURL, accept: String, deadline: UInt64) throws(Failure) -> HTTPSResponse {
        let fd = try connect(url, deadline: deadline)
        defer { close(fd) }
        let session: TLSSession
        do {
            session = try TLSSession(context: context, serverName: url.host)
        } catch let error as TLSError {
            throw .tls(error)
        } catch {
            throw .io("\(error)")
        }
        let request = """
            GET \(url.target) HTTP/1.1\r
            Host: \(url.hostHeader)\r
            User-Agent: \(userAgent)\r
            Accept: \(accept)\r
            Accept-Encoding: identity\r
            Connection: close\r
            \r

            """
        do {
            try session.startHandshake()
            try Array(request.utf8).withUnsafeBytes { try session.writePlaintext($0) }
        } catch let error as TLSError {
            throw .tls(error)
        } catch {
            throw .io("\(error)")
        }
        try send(session.takeCiphertext() ?? [], to: fd, deadline: deadline)

        var reader = HTTPResponseReader(maxBodyBytes: maxBodyBytes)
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while !reader.isComplete {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                let plaintext: [UInt8]
                do {
                    plaintext = try buffer.withUnsafeBytes {
                        try session.receivedCiphertext(UnsafeRawBufferPointer(rebasing: $0[..<count]))
                    }
                } catch let error as TLSError {
                    throw .tls(error)
                } catch {
                    throw .io("\(error)")
                }
                try send(session.takeCiphertext() ?? [], to: fd, deadline: deadline)
                try read(plaintext, into: &reader)
                if session.peerClosed { try finish(&reader) }
            } else if count == 0 {
                guard session.isHandshakeComplete else { throw .tls(.handshakeFailed("the server closed the connection")) }
                try finish(&reader)
            } else if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                try wait(fd, for: Int16(POLLIN), until: deadline,
                         step: session.isHandshakeComplete ? "reading the response" : "in the TLS handshake")
            } else {
                throw .io("reading: \(Self.errnoText())")
            }
        }
        guard let response = reader.response else { throw .response("incomplete") }
        return response
    }

    private func read(_ bytes: [UInt8], into reader: inout HTTPResponseReader) throws(Failure) {
        do {
            try reader.feed(bytes)
        } catch {
            throw Self.failure(error)
        }
    }

    private func finish(_ reader: inout HTTPResponseReader) throws(Failure) {
        do {
            try reader.finish()
        } catch {
            throw Self.failure(error)
        }
    }

    private static func failure(_ error: HTTPResponseReader.Failure) -> Failure {
        switch error {
        case .bodyTooLarge(let limit): return .bodyTooLarge(limit: limit)
        case .headTooLarge(let limit): return .response("the head is larger than \(limit) bytes")
        case .malformed(let reason): return .response(reason)
        case .truncated: return .response("the connection ended before the response did")
        }
    }

    // MARK: - Sockets

    /// A connected non-blocking socket to one of the host's addresses, tried in the resolver's order.
    private func connect(_ url: HTTPSURL, deadline: UInt64) throws(Failure) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(url.host, String(url.port), &hints, &list)
        guard status == 0, let first = list else {
            throw .resolve(host: url.host, reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        var problems: [String] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            cursor = entry.pointee.ai_next
            let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            let fd = socket(entry.pointee.ai_family, flags, 0)
            guard fd >= 0 else {
                problems.append("socket: \(Self.errnoText())")
                continue
            }
            if Glibc.connect(fd, entry.pointee.ai_addr, entry.pointee.ai_addrlen) == 0 { return fd }
            guard errno == EINPROGRESS else {
                problems.append(Self.errnoText())
                close(fd)
                continue
            }
            do throws(Failure) {
                try wait(fd, for: Int16(POLLOUT), until: deadline, step: "connecting to \(url.hostHeader)")
            } catch {
                close(fd)
                throw error
            }
            var socketError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            if getsockopt(fd, SOL_SOCKET, SO_ERROR, &socketError, &length) == 0, socketError == 0 { return fd }
            problems.append(String(cString: strerror(socketError)))
            close(fd)
        }
        throw .connect("\(url.hostHeader): \(problems.joined(separator: "; "))")
    }

    private func send(_ bytes: [UInt8], to fd: Int32, deadline: UInt64) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress.map { $0 + offset }, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written > 0 {
                offset += written
            } else if written < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                try wait(fd, for: Int16(POLLOUT), until: deadline, step: "sending")
            } else {
                throw .io("sending: \(Self.errnoText())")
            }
        }
    }

    /// Waits until `fd` is ready for `events` or the deadline passes.
    private func wait(_ fd: Int32, for events: Int16, until deadline: UInt64, step: String) throws(Failure) {
        while true {
            let now = Self.now()
            guard now < deadline else { throw .timedOut(step) }
            var descriptor = pollfd(fd: fd, events: events, revents: 0)
            let milliseconds = Int32(min((deadline - now) / 1_000_000 + 1, 60_000))
            let ready = poll(&descriptor, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0, errno != EINTR { throw .io("poll: \(Self.errnoText())") }
        }
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private static func errnoText() -> String {
        String(cString: strerror(errno))
    }
}
