import Glibc

/// The server's socket address, resolved once before the run.
struct ServerAddress: Sendable {
    /// A resolution or socket error with the failing call and `errno` text.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let storage: sockaddr_storage
    private let length: socklen_t
    private let family: Int32

    /// Resolves `host` (a literal address or a name) and `port` with `getaddrinfo`, taking the first TCP result.
    init(host: String, port: Int) throws {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list, let address = first.pointee.ai_addr else {
            throw Failure(description: "cannot resolve \(host):\(port) (getaddrinfo \(status))")
        }
        defer { freeaddrinfo(list) }
        var storage = sockaddr_storage()
        let length = first.pointee.ai_addrlen
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(length)))
        }
        self.storage = storage
        self.length = length
        self.family = first.pointee.ai_family
    }

    /// Creates a non-blocking TCP socket with `TCP_NODELAY` and starts connecting it.
    ///
    /// Returns the descriptor; the connection completes (or fails) when the socket becomes writable. With
    /// `receiveBufferBytes` the socket's receive buffer is fixed at that size before connecting (which also caps the
    /// TCP window it advertises), so a client that stops reading pushes back on the server quickly.
    func startConnect(receiveBufferBytes: Int32? = nil) throws -> Int32 {
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(family, flags, 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errnoText())") }
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        if var size = receiveBufferBytes {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = storage
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        if result != 0, errno != EINPROGRESS {
            let text = errnoText()
            close(fd)
            throw Failure(description: "connect: \(text)")
        }
        return fd
    }
}

/// The text of the current `errno`.
func errnoText() -> String {
    String(cString: strerror(errno))
}

/// Raises the soft open-file limit to the hard limit; returns the limit in effect.
func raiseOpenFileLimit() -> Int {
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    var limit = rlimit()
    guard getrlimit(resource, &limit) == 0 else { return -1 }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(resource, &limit)
    guard getrlimit(resource, &limit) == 0 else { return -1 }
    return Int(clamping: limit.rlim_cur)
}
