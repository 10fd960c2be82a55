import Dispatch
import Primitives
#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking listening socket that accepts on its own serial queue and hands each new
/// connection to the next ``EventLoop`` of its group.
///
/// Beyond `maxConnections` live connections, new peers receive `overflowResponse` (the HTTP layer
/// passes a 503) and are closed at once, so the server stays responsive under a connection flood.
public final class Listener: @unchecked Sendable {
    // Mutable state is owned by `acceptQueue`.

    /// The address actually bound (with the real port when 0 was asked for).
    public let boundAddress: SocketAddress
    private let fd: Int32
    private let group: EventLoopGroup
    private let acceptQueue: DispatchQueue
    private let maxConnections: Int
    private let overflowResponse: [UInt8]
    private let onAccept: @Sendable (Connection) -> Void
    private var source: (any DispatchSourceRead)?
    /// Live connections accepted by this listener (shared with the connections' loops).
    public let liveConnections = LiveCount()
    /// Connections refused because `maxConnections` was reached.
    public let refusedConnections = AtomicCounter()

    /// Binds and listens on `address`.
    ///
    /// - Parameters:
    ///   - maxConnections: live connections above which new peers are refused.
    ///   - overflowResponse: bytes written (best effort) to a refused peer before closing it.
    ///   - onAccept: called on the new connection's loop before reading starts; set its handler here.
    public init(
        address: SocketAddress, group: EventLoopGroup, backlog: Int32 = 4096, maxConnections: Int = 100_000,
        overflowResponse: [UInt8] = [], onAccept: @escaping @Sendable (Connection) -> Void
    ) throws(SystemCallError) {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemCallError(call: "socket", errno: errno) }
        SystemCalls.setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
        if address.family == AF_INET6 { SystemCalls.setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1) }
        let bound = address.withSockAddr { bind(fd, $0, $1) }
        guard bound == 0 else {
            let error = errno
            Glibc.close(fd)
            throw SystemCallError(call: "bind(\(address))", errno: error)
        }
        guard listen(fd, backlog) == 0 else {
            let error = errno
            Glibc.close(fd)
            throw SystemCallError(call: "listen", errno: error)
        }
        guard let actual = SocketAddress(fd: fd, peer: false) else {
            let error = errno
            Glibc.close(fd)
            throw SystemCallError(call: "getsockname", errno: error)
        }
        self.fd = fd
        self.boundAddress = actual
        self.group = group
        self.maxConnections = maxConnections
        self.overflowResponse = overflowResponse
        self.onAccept = onAccept
        self.acceptQueue = DispatchQueue(label: "canopy.accept.\(actual.port)")
    }

    /// Starts accepting.
    public func start() {
        acceptQueue.async { [self] in
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: acceptQueue)
            source.setEventHandler { [unowned self] in self.acceptAvailable() }
            source.setCancelHandler { [fd] in Glibc.close(fd) }
            self.source = source
            source.resume()
        }
    }

    /// Stops accepting and closes the listening socket; live connections are not touched.
    public func stop() {
        acceptQueue.sync {
            source?.cancel()
            source = nil
        }
    }

    private func acceptAvailable() {
        while true {
            let client = accept(fd, nil, nil)
            if client < 0 {
                switch errno {
                case EINTR, ECONNABORTED: continue
                default: return  // EAGAIN, or EMFILE/ENFILE: the next readiness event retries
                }
            }
            if liveConnections.value >= maxConnections {
                refuse(client)
                continue
            }
            do {
                try SystemCalls.setNonBlocking(client)
            } catch {
                Glibc.close(client)
                continue
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            SystemCalls.setOption(client, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
            let remote = SocketAddress(fd: client, peer: true)?.description ?? "unknown"
            let loop = group.next()
            let connection = Connection(fd: client, loop: loop, remoteAddress: remote)
            liveConnections.add(1)
            connection.liveCount = liveConnections
            let onAccept = self.onAccept
            loop.execute {
                onAccept(connection)
                if !connection.isClosed { connection.start() }
            }
        }
    }

    private func refuse(_ client: Int32) {
        refusedConnections.increment()
        if !overflowResponse.isEmpty {
            overflowResponse.withUnsafeBytes { _ = send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        Glibc.close(client)
    }
}

/// A live-connection gauge shared between the accept queue and the loops.
public final class LiveCount: Sendable {
    private let counter = AtomicCounter()
    /// The current count.
    public var value: Int { Int(bitPattern: UInt(counter.load)) }
    /// Adds `delta` (may be negative).
    public func add(_ delta: Int) { counter.add(UInt64(bitPattern: Int64(delta))) }
}
