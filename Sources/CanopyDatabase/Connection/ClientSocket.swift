import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a client socket ended.
public struct ClientSocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What failed, with the system's reason.
    public let description: String
}

/// One TCP connection to a server, owned by a ``ConnectionLoop``: resolved off the loop, connected without
/// blocking it, read when the loop's `poll` says so, and written once per turn of the loop (one `send` for a burst
/// of pipelined requests, not one each).
///
/// Portable to Linux and macOS (`poll`, no epoll or kqueue). Every method is called on the loop's thread, and
/// every event is delivered there.
final class ClientSocket: LoopDescriptor, @unchecked Sendable {
    // Every mutable property is owned by the loop's thread.

    /// What the socket reports.
    enum Event {
        /// The connection is established; writes go out.
        case connected
        /// Bytes arrived: valid only during the call (they are the socket's read buffer, not a copy).
        case received(UnsafeRawBufferPointer)
        /// The connection ended (`nil`: the server closed it in order).
        case closed(ClientSocketError?)
    }

    private let loop: ConnectionLoop
    private let onEvent: (Event) -> Void
    private(set) var descriptor: Int32 = -1
    private var connecting = true
    /// Whether the kernel refused output and the loop should say when it can take more.
    private var blocked = false
    private var unsent: [UInt8] = []
    private var unsentOffset = 0
    private var isClosed = false
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)

    /// Connects to `host`:`port`; `onEvent` hears `.connected`, then bytes, then one `.closed`.
    init(host: String, port: Int, loop: ConnectionLoop, onEvent: @escaping (Event) -> Void) {
        self.loop = loop
        self.onEvent = onEvent
        // Name resolution blocks: done off the loop.
        DispatchQueue.global().async { [self] in
            let resolved = Self.resolve(host: host, port: port)
            loop.post { [self] in
                switch resolved {
                case .success(let address): start(address)
                case .failure(let error): finish(error)
                }
            }
        }
    }

    var wantsWritable: Bool { descriptor >= 0 && (connecting || blocked) }

    /// Queues `bytes`; they go out in order once connected, at the end of the loop's turn.
    func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { source in write(count: source.count) { $0.copyMemory(from: source) } }
    }

    /// Queues `count` bytes that `fill` writes in place (a frame encoded straight into the output, no copy), as
    /// ``write(_:)``.
    func write(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) {
        loop.assertOnLoop()
        guard !isClosed else { return }
        let start = unsent.count
        unsent.append(contentsOf: repeatElement(0, count: count))
        unsent.withUnsafeMutableBytes { fill(UnsafeMutableRawBufferPointer(rebasing: $0[start...])) }
    }

    /// Closes now; pending output is dropped and no event follows.
    func close() {
        loop.assertOnLoop()
        guard !isClosed else { return }
        isClosed = true
        tearDown()
    }

    // MARK: - Connecting

    private struct Address {
        var storage = sockaddr_storage()
        var length: socklen_t = 0
        var family: Int32 = 0
    }

    private static func resolve(host: String, port: Int) -> Result<Address, ClientSocketError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = String(cString: gai_strerror(status))
            return .failure(ClientSocketError(description: "cannot resolve \(host): \(reason)"))
        }
        defer { freeaddrinfo(list) }
        var address = Address()
        address.family = first.pointee.ai_family
        address.length = first.pointee.ai_addrlen
        withUnsafeMutableBytes(of: &address.storage) { storage in
            storage.copyMemory(from: UnsafeRawBufferPointer(start: first.pointee.ai_addr, count: Int(first.pointee.ai_addrlen)))
        }
        return .success(address)
    }

    private func start(_ address: Address) {
        guard !isClosed else { return }
        #if canImport(Glibc)
        let stream = Int32(SOCK_STREAM.rawValue)
        #else
        let stream = SOCK_STREAM
        #endif
        descriptor = socket(address.family, stream, 0)
        guard descriptor >= 0 else { return finish(Self.systemError("socket")) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        var one: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var storage = address.storage
        let result = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, address.length) }
        }
        if result != 0 && errno != EINPROGRESS { return finish(Self.systemError("connect")) }
        // Connected (or failed) when the socket becomes writable.
        loop.watch(self)
    }

    private func connected() {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
        guard error == 0 else {
            return finish(ClientSocketError(description: "connect failed: \(String(cString: strerror(error)))"))
        }
        connecting = false
        onEvent(.connected)
    }

    // MARK: - The loop's calls

    func readable() {
        guard !isClosed else { return }
        // A failed connect reports an error (or a hang-up) before the socket is writable.
        if connecting { return connected() }
        let count = readBuffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count > 0 {
            readBuffer.withUnsafeBytes { onEvent(.received(UnsafeRawBufferPointer(rebasing: $0[..<count]))) }
        } else if count == 0 {
            finish(nil)
        } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
            finish(Self.systemError("read"))
        }
    }

    func writable() {
        guard !isClosed else { return }
        if connecting { return connected() }
        blocked = false
        flush()
    }

    func endOfTurn() {
        guard !isClosed, !connecting, !blocked, unsentOffset < unsent.count else { return }
        flush()
    }

    private func flush() {
        while unsentOffset < unsent.count {
            let written = unsent.withUnsafeBytes { bytes -> Int in
                guard let base = bytes.baseAddress else { return 0 }
                #if canImport(Glibc)
                return send(descriptor, base + unsentOffset, bytes.count - unsentOffset, Int32(MSG_NOSIGNAL))
                #else
                return send(descriptor, base + unsentOffset, bytes.count - unsentOffset, 0)
                #endif
            }
            if written > 0 {
                unsentOffset += written
            } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                blocked = true
                return
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return finish(Self.systemError("send"))
            }
        }
        unsent.removeAll(keepingCapacity: unsent.count <= 64 * 1024)
        unsentOffset = 0
    }

    // MARK: - Ending

    private func finish(_ error: ClientSocketError?) {
        guard !isClosed else { return }
        isClosed = true
        tearDown()
        onEvent(.closed(error))
    }

    /// Closes the descriptor; the loop stops polling it on its next turn.
    private func tearDown() {
        unsent = []
        unsentOffset = 0
        guard descriptor >= 0 else { return }
        ConnectionLoop.closeDescriptor(descriptor)
        descriptor = -1
    }

    private static func systemError(_ call: String) -> ClientSocketError {
        ClientSocketError(description: "\(call) failed: \(String(cString: strerror(errno)))")
    }
}
