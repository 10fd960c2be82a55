import CEpoll
import Glibc
import Synchronization
import TLS

extension Worker {
    /// Opens this worker's connections: at most its share of `--connect-window` between `connect` and ready, no
    /// faster than `--ramp-up`, until every connection is ready or has failed (or the run's timeout passes).
    func connectAll() {
        let window = max(1, configuration.connectWindow / workerCount)
        let deadline = monotonicNanoseconds() + UInt64(configuration.timeout * 1e9)
        var next = 0
        while connectsSettled < count {
            let now = monotonicNanoseconds()
            while connectsInFlight < window, next < count, connectDue(next) <= now {
                startConnect(next)
                next += 1
            }
            var timeout: Int32 = 10
            if next < count, connectsInFlight < window {
                let due = connectDue(next)
                timeout = due > now ? Int32(min(10, (due - now) / 1_000_000 + 1)) : 0
            }
            poll(timeoutMilliseconds: timeout)
            if monotonicNanoseconds() > deadline {
                for index in 0..<count where connections[index].state != .closed && !connections[index].ready {
                    if connections[index].state == .unused {
                        connections[index].state = .closed
                        settleFailed(index, inFlight: false)
                    } else {
                        drop(index, reason: "not ready after \(format(configuration.timeout)) s")
                    }
                }
                next = count
            }
        }
    }

    /// When local connection `index` may start: at once, or its global index ÷ `--ramp-up` seconds into the run.
    private func connectDue(_ index: Int) -> UInt64 {
        guard let rate = configuration.rampUp else { return 0 }
        return coordinator.clockOrigin &+ UInt64(Double(connections[index].global) * 1e9 / rate)
    }

    private func startConnect(_ index: Int) {
        let fd: Int32
        do {
            let global = connections[index].global
            fd = try addresses[global % addresses.count].startConnect(
                sourceAddress: sourceAddress(of: connections[index].global),
                receiveBufferBytes: connections[index].role == .stalled ? Self.stalledReceiveBuffer : nil)
        } catch {
            noteError("\(error)")
            connections[index].state = .closed
            settleFailed(index, inFlight: false)
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

    /// The loopback source address of global connection `global` when connections are spread over several
    /// (127.0.0.1, 127.0.0.2, …, round robin); nil: let the kernel choose.
    private func sourceAddress(of global: Int) -> UInt32? {
        let spread = configuration.sourceAddresses ?? 1
        guard spread > 1, addresses.allSatisfy(\.isIPv4Loopback) else { return nil }
        return 0x7F00_0001 + UInt32(global % spread)
    }

    /// Called when a connecting socket becomes writable: checks the outcome and starts TLS and the upgrade.
    func finishConnect(_ index: Int) {
        var socketError: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        let status = getsockopt(connections[index].fd, SOL_SOCKET, SO_ERROR, &socketError, &length)
        guard status == 0, socketError == 0 else {
            let code = status == 0 ? socketError : errno
            drop(index, reason: "cannot connect to \(server.host):\(server.port): \(String(cString: strerror(code)))")
            return
        }
        watchWritable(index, false)
        if plan.wireProtocol.isPlainTCP {
            connections[index].state = .open
            startPeer(index)
            return
        }
        connections[index].state = .handshaking
        if let tlsContext {
            do {
                let session = try TLSSession(context: tlsContext, serverName: server.host)
                connections[index].tls = session
                try session.startHandshake()
            } catch {
                drop(index, reason: "TLS: \(error)")
                return
            }
        }
        upgrade.bytes.withUnsafeBytes { send(index, $0) }
    }

    /// Reads the upgrade response; once it is whole and accepted the connection is open and any bytes after the
    /// head are frames. Returns false when the connection was dropped.
    func readHandshake(_ index: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let previous = connections[index].handshake.count
        connections[index].handshake.append(contentsOf: bytes)
        let response = connections[index].handshake
        guard let end = UpgradeRequest.headEnd(in: response, searchingFrom: previous - 3) else {
            if response.count > UpgradeRequest.maximumResponseBytes {
                drop(index, reason: "upgrade response head over \(UpgradeRequest.maximumResponseBytes) bytes")
                return false
            }
            return true
        }
        do {
            connections[index].deflate = try upgrade.accept(head: response[..<end])
        } catch {
            drop(index, reason: "\(error)")
            return false
        }
        connections[index].handshake = []
        connections[index].state = .open
        upgraded(index)
        guard connections[index].state == .open else { return false }
        guard end < response.count else { return true }
        return response[end...].withUnsafeBytes { scan(index, $0) }
    }

    /// Starts the protocol on a freshly upgraded connection.
    private func upgraded(_ index: Int) {
        switch plan.wireProtocol {
        case .firebase: break  // the server speaks first: its hello
        case .mqtt: sendMQTTConnect(index)
        case .raw: markReady(index)
        case .redis, .nats: startPeer(index)
        }
    }

    /// Counts a connection that is now ready for the workload.
    func markReady(_ index: Int) {
        guard !connections[index].ready else { return }
        connections[index].ready = true
        connections[index].lastWriter = -1
        connections[index].lastSequence = 0
        result.opened += 1
        coordinator.opened.add(1, ordering: .relaxed)
        connectsInFlight -= 1
        connectsSettled += 1
    }

    /// Counts a connection that failed before it was ready.
    func settleFailed(_ index: Int, inFlight: Bool = true) {
        result.failedConnects += 1
        coordinator.failed.add(1, ordering: .relaxed)
        if inFlight { connectsInFlight -= 1 }
        connectsSettled += 1
    }
}
