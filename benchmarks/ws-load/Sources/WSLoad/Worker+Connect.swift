import CEpoll
import Glibc
import Synchronization

extension Worker {
    /// Opens this worker's connections with at most its share of `--connect-window` between `connect` and upgrade.
    func connectAll() {
        let window = max(1, options.connectWindow / options.threads)
        let deadline = monotonicNanoseconds() + UInt64(options.timeout * 1e9)
        var next = 0
        while connectsSettled < count {
            while connectsInFlight < window, next < count {
                startConnect(next)
                next += 1
            }
            poll(timeoutMilliseconds: 10)
            if monotonicNanoseconds() > deadline {
                for index in 0..<count
                where connections[index].state == .connecting || connections[index].state == .handshaking {
                    drop(index, reason: "timed out before the upgrade completed")
                }
                for _ in next..<count {
                    result.failedConnects += 1
                    coordinator.failed.add(1, ordering: .relaxed)
                    connectsSettled += 1
                }
                next = count
            }
        }
    }

    private func startConnect(_ index: Int) {
        let fd: Int32
        do {
            fd = try address.startConnect(
                receiveBufferBytes: connections[index].role == .stalled ? Self.stalledReceiveBuffer : nil)
        } catch {
            noteError("\(error)")
            result.failedConnects += 1
            coordinator.failed.add(1, ordering: .relaxed)
            connectsSettled += 1
            return
        }
        connections[index].fd = fd
        connections[index].state = .connecting
        connections[index].wantsWritable = true
        connectsInFlight += 1
        var event = epoll_event()
        event.events = EPOLLOUT.rawValue
        event.data.u64 = UInt64(index)
        if epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) != 0 {
            drop(index, reason: "epoll_ctl: \(errnoText())")
        }
    }

    /// Called when a connecting socket becomes writable: checks the outcome and sends the upgrade request.
    func finishConnect(_ index: Int) {
        var socketError: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        let status = getsockopt(connections[index].fd, SOL_SOCKET, SO_ERROR, &socketError, &length)
        guard status == 0, socketError == 0 else {
            drop(index, reason: "connect: \(String(cString: strerror(status == 0 ? socketError : errno)))")
            return
        }
        connections[index].state = .handshaking
        watchWritable(index, false)
        handshakeRequest.withUnsafeBytes { send(index, $0) }
    }

    /// Reads the upgrade response; on `101` the connection is open and any bytes after the headers are frames.
    func readHandshake(_ index: Int) {
        let count = read(connections[index].fd, readBuffer, Self.readCapacity)
        if count == 0 {
            drop(index, reason: "closed by the server during the upgrade")
            return
        }
        if count < 0 {
            if errno != EAGAIN && errno != EINTR { drop(index, reason: "read: \(errnoText())") }
            return
        }
        let previous = connections[index].handshake.count
        connections[index].handshake.append(
            contentsOf: UnsafeRawBufferPointer(start: readBuffer, count: count))
        guard let end = Self.headerEnd(in: connections[index].handshake, searchingFrom: max(0, previous - 3)) else {
            if connections[index].handshake.count > 16 * 1024 {
                drop(index, reason: "upgrade response headers over 16 KiB")
            }
            return
        }
        let response = connections[index].handshake
        let statusLine = response.prefix(while: { $0 != UInt8(ascii: "\r") })
        guard statusLine.starts(with: Array("HTTP/1.1 101".utf8)) else {
            drop(index, reason: "upgrade refused: \(String(decoding: statusLine.prefix(80), as: UTF8.self))")
            return
        }
        connections[index].handshake = []
        connections[index].state = .open
        connectsInFlight -= 1
        connectsSettled += 1
        if plan == nil {
            result.opened += 1
            coordinator.opened.add(1, ordering: .relaxed)
        }
        if end < response.count {
            let leftover = Array(response[end...])
            _ = leftover.withUnsafeBytes { scan(index, $0) }
        }
    }

    /// The index just past the blank line that ends the headers, if it has arrived.
    private static func headerEnd(in bytes: [UInt8], searchingFrom start: Int) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var index = start
        while index + 3 < bytes.count {
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 {
                return index + 4
            }
            index += 1
        }
        return nil
    }
}
