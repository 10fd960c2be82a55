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

/// One TCP connection to a server, owned by a serial queue: resolved and connected without blocking that queue,
/// read by a dispatch read source and written directly, or through a dispatch write source while the socket is full.
///
/// Portable to Linux and macOS (Dispatch only, no epoll or kqueue of its own). Every method is called on `queue`,
/// and every event is delivered there.
final class ClientSocket: @unchecked Sendable {
    // Every mutable property is owned by `queue`.

    /// What the socket reports.
    enum Event {
        /// The connection is established; writes go out.
        case connected
        /// Bytes arrived: valid only during the call (they are the socket's read buffer, not a copy).
        case received(UnsafeRawBufferPointer)
        /// The connection ended (`nil`: the server closed it in order).
        case closed(ClientSocketError?)
    }

    private let queue: DispatchQueue
    private let onEvent: (Event) -> Void
    private var descriptor: Int32 = -1
    private var readSource: (any DispatchSourceRead)?
    private var writeSource: (any DispatchSourceWrite)?
    private var connecting = true
    private var unsent: [UInt8] = []
    private var unsentOffset = 0
    private var isClosed = false
    /// Whether a flush is queued for the end of this turn.
    private var flushScheduled = false
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// Sources not yet cancelled completely; the descriptor waits for them.
    private var liveSources = 0
    private var descriptorToClose: Int32 = -1

    /// Connects to `host`:`port`; `onEvent` hears `.connected`, then bytes, then one `.closed`.
    init(host: String, port: Int, queue: DispatchQueue, onEvent: @escaping (Event) -> Void) {
        self.queue = queue
        self.onEvent = onEvent
        // Name resolution blocks: done off the queue.
        DispatchQueue.global().async { [self] in
            let resolved = Self.resolve(host: host, port: port)
            queue.async { [self] in
                switch resolved {
                case .success(let address): start(address)
                case .failure(let error): finish(error)
                }
            }
        }
    }

    /// Queues `bytes`; they go out in order once connected, with everything else written in the same turn of the
    /// queue (one `send` for a burst of pipelined requests, not one each).
    func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { source in write(count: source.count) { $0.copyMemory(from: source) } }
    }

    /// Queues `count` bytes that `fill` writes in place (a frame encoded straight into the output, no copy), as
    /// ``write(_:)``.
    func write(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !isClosed else { return }
        let start = unsent.count
        unsent.append(contentsOf: repeatElement(0, count: count))
        unsent.withUnsafeMutableBytes { fill(UnsafeMutableRawBufferPointer(rebasing: $0[start...])) }
        scheduleFlush()
    }

    /// Sends what is queued at the end of this turn of the queue.
    private func scheduleFlush() {
        guard !connecting, writeSource == nil, !flushScheduled else { return }
        flushScheduled = true
        queue.async { [self] in
            flushScheduled = false
            if !isClosed, !connecting, writeSource == nil { flush() }
        }
    }

    /// Closes now; pending output is dropped and no event follows.
    func close() {
        dispatchPrecondition(condition: .onQueue(queue))
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
        waitUntilWritable()
    }

    private func connected() {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
        guard error == 0 else {
            return finish(ClientSocketError(description: "connect failed: \(String(cString: strerror(error)))"))
        }
        connecting = false
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler { [weak self] in self?.readAvailable() }
        watch(source)
        source.resume()
        readSource = source
        onEvent(.connected)
        if !isClosed, !unsent.isEmpty { flush() }
    }

    // MARK: - Reading and writing

    private func readAvailable() {
        let count = readBuffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count > 0 {
            readBuffer.withUnsafeBytes { onEvent(.received(UnsafeRawBufferPointer(rebasing: $0[..<count]))) }
        } else if count == 0 {
            finish(nil)
        } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
            finish(Self.systemError("read"))
        }
    }

    private func flush() {
        while unsentOffset < unsent.count {
            let written = unsent.withUnsafeBytes { bytes in
                #if canImport(Glibc)
                send(descriptor, bytes.baseAddress! + unsentOffset, bytes.count - unsentOffset, Int32(MSG_NOSIGNAL))
                #else
                send(descriptor, bytes.baseAddress! + unsentOffset, bytes.count - unsentOffset, 0)
                #endif
            }
            if written > 0 {
                unsentOffset += written
            } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                return waitUntilWritable()
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return finish(Self.systemError("send"))
            }
        }
        unsent.removeAll(keepingCapacity: unsent.count <= 64 * 1024)
        unsentOffset = 0
    }

    private func waitUntilWritable() {
        guard writeSource == nil else { return }
        let source = DispatchSource.makeWriteSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler { [weak self] in
            guard let self, !isClosed, let writeSource else { return }
            self.writeSource = nil
            writeSource.cancel()
            if connecting { connected() } else { flush() }
        }
        watch(source)
        source.resume()
        writeSource = source
    }

    // MARK: - Ending

    private func finish(_ error: ClientSocketError?) {
        guard !isClosed else { return }
        isClosed = true
        tearDown()
        onEvent(.closed(error))
    }

    /// Cancels the sources; the descriptor is closed once every source has let go of it (Dispatch's rule).
    private func tearDown() {
        readSource?.cancel()
        writeSource?.cancel()
        readSource = nil
        writeSource = nil
        unsent = []
        descriptorToClose = descriptor
        descriptor = -1
        closeDescriptorIfUnwatched()
    }

    /// Counts `source` among those watching the descriptor until its cancellation completes.
    private func watch(_ source: any DispatchSourceProtocol) {
        liveSources += 1
        source.setCancelHandler { [self] in
            liveSources -= 1
            closeDescriptorIfUnwatched()
        }
    }

    private func closeDescriptorIfUnwatched() {
        guard liveSources == 0, descriptorToClose >= 0 else { return }
        #if canImport(Glibc)
        _ = Glibc.close(descriptorToClose)
        #else
        _ = Darwin.close(descriptorToClose)
        #endif
        descriptorToClose = -1
    }

    private static func systemError(_ call: String) -> ClientSocketError {
        ClientSocketError(description: "\(call) failed: \(String(cString: strerror(errno)))")
    }
}

