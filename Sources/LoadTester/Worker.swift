import CEpoll
import Glibc
import Synchronization
import TLS

/// One epoll loop on one thread driving a share of the connections.
///
/// Worker `index` of `count` (over all processes) owns global connections `index`, `index + count`, … Everything in
/// a worker is owned by its thread; the process's reporter reads `result` only after joining the thread.
final class Worker: @unchecked Sendable {
    static let readCapacity = 256 * 1024
    static let eventCapacity = 1024
    /// Most bytes a gathered message (split, fragmented, compressed or inflated) may reach before the connection
    /// is dropped.
    static let maximumMessageBytes = 64 << 20

    /// This worker's number over all processes, and how many workers there are.
    let workerIndex: Int
    let workerCount: Int
    let configuration: BenchConfiguration
    let plan: RunPlan
    let server: ServerURL
    /// The server's address, or each node's of a cluster (connection `global` goes to node `global % count`).
    let addresses: [ServerAddress]
    let coordinator: Coordinator
    /// Connections owned here.
    let count: Int
    let connections: UnsafeMutablePointer<Connection>
    let epollFD: Int32
    let readBuffer: UnsafeMutableRawPointer
    let events: UnsafeMutablePointer<epoll_event>
    /// Where outgoing frames are built before one `send` per connection.
    let sendScratch: UnsafeMutableRawPointer
    let sendCapacity: Int
    let upgrade: UpgradeRequest
    let tlsContext: TLSContext?
    /// Echo: the message every round trip carries.
    let echoPayload: [UInt8]
    /// State of the xorshift generator for masking keys.
    var randomState: UInt64
    var result = WorkerResult()

    // Connect phase bookkeeping.
    var connectsInFlight = 0
    var connectsSettled = 0
    // Workload bookkeeping.
    /// Whether received messages count (and, for echo and writers, whether to send more).
    var measuring = false
    var lastProgress: UInt64 = 0
    /// Deliveries this worker's subscribers must receive in total.
    var expected = 0
    /// The current second's counts and latencies, handed to the coordinator when the second is over.
    var interval = IntervalSample(second: 0)
    /// Writes sent so far, and the totals last added to the coordinator's live counters.
    var sentTotal = 0
    var published = (delivered: 0, acks: 0, sent: 0)
    /// Where one message's JSON (or MQTT packet) is built before it is framed.
    var messageScratch: [UInt8] = []
    /// Where a compressed message is inflated.
    var inflated: [UInt8] = []
    /// When the workload started; with `--rate` a writer's write `k` is due at `start + k × writeInterval` (plus a
    /// per-writer offset that spreads the writers).
    var workloadStart: UInt64 = 0
    var writeInterval: UInt64 = 0
    /// The stalled subscriber's local index and story, when this worker owns it.
    var stalledLocal: Int?
    var stall = StallOutcome()
    /// When the last `read` returned; every update in those bytes arrived by then (one clock read per read, not per
    /// update).
    var readTime: UInt64 = 0
    /// Firebase writers: when each outstanding write was sent, by request number modulo the ring's size.
    let sendTimes: UnsafeMutablePointer<UInt64>
    let sendTimeRing: Int

    /// Creates worker `index` of `count`, owning global connections `index`, `index + count`, …
    init(
        index: Int, count workers: Int, configuration: BenchConfiguration, plan: RunPlan, server: ServerURL,
        addresses: [ServerAddress], tlsContext: TLSContext?, coordinator: Coordinator
    ) {
        workerIndex = index
        workerCount = workers
        self.configuration = configuration
        self.plan = plan
        self.server = server
        self.addresses = addresses
        self.tlsContext = tlsContext
        self.coordinator = coordinator
        let globalIndices = Array(stride(from: index, to: plan.connections, by: workers))
        count = globalIndices.count
        connections = .allocate(capacity: max(count, 1))
        connections.initialize(repeating: Connection(), count: max(count, 1))
        var writerSlots = 0
        for (local, global) in globalIndices.enumerated() {
            let (role, room) = plan.role(of: global)
            connections[local].global = global
            connections[local].role = role
            connections[local].room = room
            if role == .writer {
                connections[local].writerIndex = global
                connections[local].quota = plan.writerQuota[global]
                connections[local].writerSlot = writerSlots
                writerSlots += 1
            }
            if role == .stalled { stalledLocal = local }
        }
        sendTimeRing = configuration.rate == nil ? max(64, configuration.window).nextPowerOfTwo : 8192
        sendTimes = .allocate(capacity: max(1, writerSlots * sendTimeRing))
        sendTimes.initialize(repeating: 0, count: max(1, writerSlots * sendTimeRing))
        messageScratch.reserveCapacity(512 + configuration.payload)
        epollFD = epoll_create1(0)
        readBuffer = .allocate(byteCount: Self.readCapacity, alignment: 16)
        events = .allocate(capacity: Self.eventCapacity)
        sendCapacity = max(64 * 1024, 2 * (configuration.payload + 512))
        sendScratch = .allocate(byteCount: sendCapacity, alignment: 16)
        upgrade = UpgradeRequest(configuration: configuration, server: server)
        echoPayload = (0..<configuration.payload).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        randomState = 0x9E37_79B9_7F4A_7C15 &* UInt64(index + 1)
    }

    deinit {
        connections.deinitialize(count: max(count, 1))
        connections.deallocate()
        sendTimes.deallocate()
        readBuffer.deallocate()
        events.deallocate()
        sendScratch.deallocate()
        close(epollFD)
    }

    /// Runs the whole life of this worker: connect, wait for the start, drive the workload, close.
    func run() {
        guard epollFD >= 0 else {
            noteError("epoll_create1: \(errnoText())")
            result.failedConnects = count
            coordinator.failed.add(count, ordering: .relaxed)
            coordinator.connectedWorkers.add(1, ordering: .relaxed)
            coordinator.finishedWorkers.add(1, ordering: .relaxed)
            return
        }
        connectAll()
        coordinator.connectedWorkers.add(1, ordering: .relaxed)
        while coordinator.phase == .connecting {
            poll(timeoutMilliseconds: 5)
        }
        if coordinator.phase == .running {
            switch plan.scenario {
            case .fanout, .rooms, .query, .writes: runUpdates()
            case .echo: runEcho()
            case .connections: runIdle()
            }
        } else {
            coordinator.finishedWorkers.add(1, ordering: .relaxed)
        }
        closeAll()
    }

    /// Waits for readiness once and handles every ready connection.
    func poll(timeoutMilliseconds: Int32) {
        let ready = epoll_wait(epollFD, events, Int32(Self.eventCapacity), timeoutMilliseconds)
        guard ready > 0 else { return }
        for slot in 0..<Int(ready) {
            let flags = events[slot].events
            let index = Int(truncatingIfNeeded: events[slot].data.u64)
            guard index >= 0, index < count else { continue }
            handle(index: index, flags: flags)
        }
    }

    private func handle(index: Int, flags: UInt32) {
        let failure = flags & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0
        switch connections[index].state {
        case .connecting:
            finishConnect(index)
        case .handshaking, .open:
            if flags & EPOLLOUT.rawValue != 0 { flushOutbound(index) }
            if flags & EPOLLIN.rawValue != 0 || failure { readAvailable(index) }
        case .unused, .closed:
            break
        }
    }

    /// Reads until the socket is drained, decrypting with TLS, and hands every byte to the upgrade or frame scanner.
    private func readAvailable(_ index: Int) {
        let before = result.received &+ result.acks &+ result.rejectedWrites
        while connections[index].state == .open || connections[index].state == .handshaking {
            let count = read(connections[index].fd, readBuffer, Self.readCapacity)
            if count > 0 {
                readTime = monotonicNanoseconds()
                let raw = UnsafeRawBufferPointer(start: readBuffer, count: count)
                let alive: Bool
                if let session = connections[index].tls {
                    let plaintext: [UInt8]
                    do {
                        plaintext = try session.receivedCiphertext(raw)
                    } catch {
                        flushTLS(index)
                        drop(index, reason: "TLS: \(error)")
                        return
                    }
                    flushTLS(index)
                    alive = plaintext.withUnsafeBytes { consume(index, $0) }
                } else {
                    alive = consume(index, raw)
                }
                guard alive else { return }
                if count < Self.readCapacity { break }
            } else if count == 0 {
                drop(index, reason: "closed by the server")
                return
            } else if errno == EINTR {
                continue
            } else {
                if errno != EAGAIN { drop(index, reason: "read: \(errnoText())") }
                break
            }
        }
        if result.received &+ result.acks &+ result.rejectedWrites != before {
            lastProgress = readTime
            if connections[index].role == .writer { sendWrites(index, now: readTime) }
        }
    }

    /// Handles plaintext from the server: the upgrade response while handshaking, frames afterwards.
    private func consume(_ index: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        if connections[index].state == .handshaking { return readHandshake(index, bytes) }
        if plan.wireProtocol.isPlainTCP { return peerBytes(index, bytes) }
        return scan(index, bytes)
    }

    /// Sends `bytes` (encrypted first with TLS), or queues them behind bytes a short write left.
    func send(_ index: Int, _ bytes: UnsafeRawBufferPointer) {
        guard let session = connections[index].tls else {
            sendRaw(index, bytes)
            return
        }
        do {
            try session.writePlaintext(bytes)
        } catch {
            drop(index, reason: "TLS: \(error)")
            return
        }
        flushTLS(index)
    }

    /// Sends whatever ciphertext the TLS session has ready.
    func flushTLS(_ index: Int) {
        guard let session = connections[index].tls else { return }
        while let ciphertext = session.takeCiphertext() {
            ciphertext.withUnsafeBytes { sendRaw(index, $0) }
        }
    }

    /// Writes bytes to the socket now, or queues them behind bytes a short write left; watches for writability.
    private func sendRaw(_ index: Int, _ bytes: UnsafeRawBufferPointer) {
        guard connections[index].state == .open || connections[index].state == .handshaking else { return }
        if !connections[index].outbound.isEmpty {
            connections[index].outbound.append(contentsOf: bytes)
            return
        }
        guard let sent = Self.sendAvailable(connections[index].fd, bytes) else {
            drop(index, reason: "send: \(errnoText())")
            return
        }
        guard sent < bytes.count else { return }
        connections[index].outbound.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[sent...]))
        watchWritable(index, true)
    }

    /// Writes queued bytes; once they are gone, stops watching for writability and lets a writer send more.
    func flushOutbound(_ index: Int) {
        let offset = connections[index].outboundOffset
        if offset < connections[index].outbound.count {
            let fd = connections[index].fd
            let sent = connections[index].outbound.withUnsafeBytes {
                Self.sendAvailable(fd, UnsafeRawBufferPointer(rebasing: $0[offset...]))
            }
            guard let sent else {
                drop(index, reason: "send: \(errnoText())")
                return
            }
            connections[index].outboundOffset += sent
            guard connections[index].outboundOffset == connections[index].outbound.count else { return }
        }
        connections[index].outbound.removeAll(keepingCapacity: true)
        connections[index].outboundOffset = 0
        watchWritable(index, false)
        if connections[index].role == .writer { sendWrites(index, now: monotonicNanoseconds()) }
    }

    /// Sends as much of `bytes` as the socket takes now: the count sent (short when it would block), or `nil` when
    /// the send failed (`errno` tells why).
    private static func sendAvailable(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int? {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.send(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if written > 0 {
                offset += written
            } else if written < 0, errno == EINTR {
                continue
            } else if written < 0, errno == EAGAIN {
                break
            } else {
                return nil
            }
        }
        return offset
    }

    /// Registers `index` for readability, plus writability when `writable`.
    func watchWritable(_ index: Int, _ writable: Bool) {
        guard connections[index].wantsWritable != writable else { return }
        connections[index].wantsWritable = writable
        guard !connections[index].paused else { return }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | (writable ? EPOLLOUT.rawValue : 0)
        event.data.u64 = UInt64(index)
        _ = epoll_ctl(epollFD, EPOLL_CTL_MOD, connections[index].fd, &event)
    }

    /// Closes a connection that failed or that the server closed, and counts it.
    func drop(_ index: Int, reason: String) {
        switch connections[index].state {
        case .connecting, .handshaking:
            settleFailed(index)
        case .open where !connections[index].ready:
            settleFailed(index)
        case .open where connections[index].role == .stalled:
            stall.disconnectReason = reason
        case .open:
            result.closedByServer += 1
        case .unused, .closed:
            return
        }
        if connections[index].role != .stalled { noteError(reason) }
        close(connections[index].fd)
        connections[index].state = .closed
        connections[index].tls = nil
        connections[index].deflate = nil
    }

    /// Keeps the first few error messages for the report.
    func noteError(_ text: String) {
        if result.errors.count < 5 { result.errors.append(text) }
    }

    private func closeAll() {
        for index in 0..<count where connections[index].state != .closed && connections[index].state != .unused {
            close(connections[index].fd)
            connections[index].state = .closed
            connections[index].tls = nil
            connections[index].deflate = nil
        }
    }

    /// A fresh 32-bit masking key (xorshift64*; masking keys need not be secret for a load test).
    @inline(__always)
    func nextMaskKey() -> UInt32 {
        randomState ^= randomState >> 12
        randomState ^= randomState << 25
        randomState ^= randomState >> 27
        return UInt32(truncatingIfNeeded: (randomState &* 0x2545_F491_4F6C_DD1D) >> 32)
    }
}

extension Int {
    /// The smallest power of two at least `self` (`self` ≥ 1).
    var nextPowerOfTwo: Int {
        var value = 1
        while value < self { value <<= 1 }
        return value
    }
}
