#if canImport(Glibc)
import Glibc
#endif

extension Connection {
    /// Opens a client connection to `address` (a blocking `connect`, then non-blocking I/O),
    /// owned by the next loop of `group`. Used by tests and the load tester.
    ///
    /// Call ``activate(handler:)`` on the returned connection's loop to start reading.
    public static func connect(to address: SocketAddress, group: EventLoopGroup) throws(SystemCallError) -> Connection {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemCallError(call: "socket", errno: errno) }
        var result: Int32
        repeat {
            result = address.withSockAddr { Glibc.connect(fd, $0, $1) }
        } while result != 0 && errno == EINTR
        guard result == 0 else {
            let error = errno
            Glibc.close(fd)
            throw SystemCallError(call: "connect(\(address))", errno: error)
        }
        do {
            try SystemCalls.setNonBlocking(fd)
        } catch {
            Glibc.close(fd)
            throw error
        }
        SystemCalls.setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        return Connection(fd: fd, loop: group.next(), remoteAddress: address.description)
    }

    /// Sets the handler and starts reading; call on the connection's loop.
    public func activate(handler: any ConnectionHandler) {
        loop.assertInLoop()
        self.handler = handler
        start()
    }
}
