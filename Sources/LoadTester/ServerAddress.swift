import Glibc

/// The server's socket address, resolved once before the run.
struct ServerAddress: Sendable {
    /// A resolution or socket error with the failing call and `errno` text.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// `IP_BIND_ADDRESS_NO_PORT` (Linux 4.2, `<linux/in.h>`): bind picks the address now and the port at `connect`,
    /// so that the port only has to be unique per destination rather than per source address.
    private static let bindAddressNoPort: Int32 = 24

    private let storage: sockaddr_storage
    private let length: socklen_t
    private let family: Int32
    /// The host and port as given, for messages.
    let name: String

    /// Resolves `host` (a literal address or a name) and `port` with `getaddrinfo`, taking the first TCP result.
    init(host: String, port: Int) throws {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list, let address = first.pointee.ai_addr else {
            throw Failure(description: "cannot resolve \(host):\(port): \(String(cString: gai_strerror(status)))")
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
        name = "\(host):\(port)"
    }

    /// Whether the server is an IPv4 loopback address (127.0.0.0/8), so that client sockets may be bound to other
    /// loopback source addresses.
    var isIPv4Loopback: Bool {
        guard family == AF_INET else { return false }
        var copy = storage
        // sockaddr_in: family (2 bytes), port (2), then the address in network byte order.
        return withUnsafeBytes(of: &copy) { $0[4] == 127 }
    }

    /// Creates a non-blocking TCP socket with `TCP_NODELAY` and starts connecting it.
    ///
    /// Returns the descriptor; the connection completes (or fails) when the socket becomes writable. With
    /// `sourceAddress` (an IPv4 address in host byte order) the socket is bound to it first. With
    /// `receiveBufferBytes` the socket's receive buffer is fixed at that size before connecting (which also caps the
    /// TCP window it advertises), so a client that stops reading pushes back on the server quickly.
    func startConnect(sourceAddress: UInt32? = nil, receiveBufferBytes: Int32? = nil) throws -> Int32 {
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(family, flags, 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errnoText())") }
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        if var size = receiveBufferBytes {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let sourceAddress {
            _ = setsockopt(fd, Int32(IPPROTO_IP), Self.bindAddressNoPort, &one, socklen_t(MemoryLayout<Int32>.size))
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = sourceAddress.bigEndian
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            if bound != 0 {
                let text = errnoText()
                close(fd)
                throw Failure(description: "bind to a loopback source address: \(text)")
            }
        }
        var address = storage
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        if result != 0, errno != EINPROGRESS {
            let text = errnoText()
            close(fd)
            throw Failure(description: "cannot connect to \(name): \(text)")
        }
        return fd
    }
}

/// The text of the current `errno`.
func errnoText() -> String {
    String(cString: strerror(errno))
}
