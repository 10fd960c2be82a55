import CEpoll
import Glibc
import Synchronization

/// What one worker measured; read by the main thread after joining the worker's thread.
struct WorkerResult {
    var opened = 0
    var failedConnects = 0
    /// Connections the server closed (or reset) after their upgrade.
    var closedByServer = 0
    /// Data messages received by all of this worker's connections during the workload.
    var received = 0
    /// Broadcast: messages sent by this worker's senders.
    var sent = 0
    /// Broadcast: when this worker's last expected message arrived (or its last delivery, if some never came).
    var lastDelivery: UInt64 = 0
    /// Echo: completed round trips and their latencies.
    var roundTrips = 0
    var histogram: LatencyHistogram?
    /// The first few errors, for the human output.
    var errors: [String] = []
    /// Firebase: puts acknowledged with `ok`, puts answered with another status, and when the last answer came.
    var acks = 0
    var rejectedPuts = 0
    var lastAck: UInt64 = 0
    /// Firebase: pushes during the workload that were not a benchmark update at the listened path.
    var unexpectedPushes = 0
    /// Firebase: updates that did not follow the previous one of their room (checked in rooms with one writer).
    var outOfOrder = 0
    /// Firebase: the stalled subscriber's story, from the worker that owns it.
    var stall: StallOutcome?
    /// Firebase: the reference subscriber's last value, from the worker that owns it.
    var referenceValue: BenchValue?
    /// Firebase: deliveries per second of the run.
    var timeline = DeliveryTimeline(seconds: 0)
}

/// One epoll loop on one thread driving a share of the connections.
///
/// Everything in a worker is owned by its thread; the main thread reads `result` only after joining it.
final class Worker: @unchecked Sendable {
    static let readCapacity = 256 * 1024
    static let eventCapacity = 1024

    /// This worker's number; it owns global connections `workerIndex`, `workerIndex + threads`, …
    let workerIndex: Int
    let options: LoadOptions
    let address: ServerAddress
    let coordinator: Coordinator
    let count: Int
    let connections: UnsafeMutablePointer<Connection>
    let epollFD: Int32
    let readBuffer: UnsafeMutableRawPointer
    let events: UnsafeMutablePointer<epoll_event>
    /// Where outgoing frames are built before one `send` per connection.
    let sendScratch: UnsafeMutableRawPointer
    let sendCapacity: Int
    let handshakeRequest: [UInt8]
    /// The payload every message carries (its first bytes are replaced by the sender tag in broadcast).
    let payload: [UInt8]
    let frameOpcode: UInt8
    /// State of the xorshift generator for masking keys.
    var randomState: UInt64
    var result = WorkerResult()

    // Connect phase bookkeeping.
    var connectsInFlight = 0
    var connectsSettled = 0
    // Workload bookkeeping.
    /// Whether received messages count (and, for echo and senders, whether to send more).
    var measuring = false
    var lastProgress: UInt64 = 0
    /// Broadcast: messages this worker's connections must receive in total.
    var expected = 0
    /// Echo: round-trip latencies; Firebase: write-to-delivery latencies.
    var latencies: LatencyHistogram?
    /// Firebase modes: the run's layout, and where one put's JSON is built before it is framed.
    let plan: FirebasePlan?
    var messageScratch: [UInt8] = []
    /// Firebase modes: when the workload started; a writer's put `k` is due at `start + k × writeInterval` with
    /// `--rate` (plus a per-writer offset that spreads the writers).
    var workloadStart: UInt64 = 0
    var writeInterval: UInt64 = 0
    /// Firebase modes: the stalled subscriber's local index and story, when this worker owns it.
    var stalledLocal: Int?
    var stall = StallOutcome()
    /// Firebase modes: when the last `read` returned; every update in those bytes arrived by then (one clock read
    /// per read, not per update).
    var readTime: UInt64 = 0
    /// Firebase modes: deliveries per second of the run (empty unless `--timeline`).
    var timeline: DeliveryTimeline

    /// Creates worker `index` of `options.threads`, owning global connections `index`, `index + threads`, …
    init(index: Int, options: LoadOptions, address: ServerAddress, coordinator: Coordinator) {
        workerIndex = index
        timeline = DeliveryTimeline(seconds: options.firebase.timeline ? Int(options.timeout) + 2 : 0)
        self.options = options
        self.address = address
        self.coordinator = coordinator
        let globalIndices = Array(stride(from: index, to: options.connections, by: options.threads))
        count = globalIndices.count
        connections = .allocate(capacity: max(count, 1))
        connections.initialize(repeating: Connection(), count: max(count, 1))
        let plan = options.mode.isFirebase ? FirebasePlan(options: options) : nil
        self.plan = plan
        let frameBytes = options.payload + 14
        let messagesPerSender = options.messages / options.senders + 1
        for (local, global) in globalIndices.enumerated() where options.mode == .broadcast && global < options.senders {
            connections[local].isSender = true
            connections[local].senderTag = SenderTag.packed(of: global)
            connections[local].quota = options.messages / options.senders
                + (global < options.messages % options.senders ? 1 : 0)
            connections[local].outbound.reserveCapacity(min(options.window, messagesPerSender) * frameBytes)
        }
        if let plan {
            for (local, global) in globalIndices.enumerated() {
                let (role, room) = plan.role(of: global)
                connections[local].role = role
                connections[local].room = room
                if role == .writer {
                    connections[local].writerIndex = global
                    connections[local].quota = plan.writerQuota[global]
                }
                if role == .stalled { stalledLocal = local }
            }
            messageScratch.reserveCapacity(256 + options.payload)
            latencies = LatencyHistogram()
        }
        epollFD = epoll_create1(0)
        readBuffer = .allocate(byteCount: Self.readCapacity, alignment: 16)
        events = .allocate(capacity: Self.eventCapacity)
        sendCapacity = max(64 * 1024, 2 * (frameBytes + 160))
        sendScratch = .allocate(byteCount: sendCapacity, alignment: 16)
        handshakeRequest = Array(("GET \(options.path) HTTP/1.1\r\nHost: \(options.host):\(options.port)\r\n"
            + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            + "Sec-WebSocket-Version: 13\r\n\r\n").utf8)
        payload = (0..<options.payload).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        frameOpcode = options.binary ? 0x2 : 0x1
        randomState = 0x9E37_79B9_7F4A_7C15 &* UInt64(index + 1)
    }

    deinit {
        connections.deinitialize(count: max(count, 1))
        connections.deallocate()
        readBuffer.deallocate()
        events.deallocate()
        sendScratch.deallocate()
        close(epollFD)
    }

    /// Runs the whole life of this worker: connect, wait for the start, drive the workload, close.
    func run() {
        guard epollFD >= 0 else {
            noteError("epoll_create1: \(errnoText())")
            coordinator.failed.add(count, ordering: .relaxed)
            return
        }
        connectAll()
        while coordinator.phase == .connecting {
            poll(timeoutMilliseconds: 5)
        }
        if coordinator.phase == .running {
            switch options.mode {
            case .echo: runEcho()
            case .broadcast: runBroadcast()
            case .idle: runIdle()
            case .fanout, .rooms: runFirebase()
            }
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
        case .handshaking:
            if flags & EPOLLOUT.rawValue != 0 { flushOutbound(index) }
            if flags & EPOLLIN.rawValue != 0 || failure { readHandshake(index) }
        case .open:
            if flags & EPOLLOUT.rawValue != 0 { flushOutbound(index) }
            if flags & EPOLLIN.rawValue != 0 || failure { readFrames(index) }
        case .unused, .closed:
            break
        }
    }

    /// Reads until the socket is drained and scans every byte for frames.
    private func readFrames(_ index: Int) {
        let before = result.received + result.acks + result.rejectedPuts
        while connections[index].state == .open {
            let count = read(connections[index].fd, readBuffer, Self.readCapacity)
            if count > 0 {
                if plan != nil { readTime = monotonicNanoseconds() }
                guard scan(index, UnsafeRawBufferPointer(start: readBuffer, count: count)) else { return }
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
        if result.received + result.acks + result.rejectedPuts != before {
            lastProgress = monotonicNanoseconds()
            if connections[index].isSender { topUp(index) }
            if connections[index].role == .writer { sendPuts(index, now: lastProgress) }
        }
    }

    /// Sends `bytes` now, or queues them behind bytes a short write left; watches for writability when needed.
    func send(_ index: Int, _ bytes: UnsafeRawBufferPointer) {
        guard connections[index].state == .open || connections[index].state == .handshaking else { return }
        if !connections[index].outbound.isEmpty {
            connections[index].outbound.append(contentsOf: bytes)
            return
        }
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.send(
                connections[index].fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset,
                Int32(MSG_NOSIGNAL))
            if written > 0 {
                offset += written
            } else if written < 0, errno == EINTR {
                continue
            } else if written < 0, errno == EAGAIN {
                break
            } else {
                drop(index, reason: "send: \(errnoText())")
                return
            }
        }
        guard offset < bytes.count else { return }
        connections[index].outbound.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset...]))
        watchWritable(index, true)
    }

    /// Writes queued bytes; once they are gone, stops watching for writability and lets a sender send more.
    func flushOutbound(_ index: Int) {
        while connections[index].outboundOffset < connections[index].outbound.count {
            let offset = connections[index].outboundOffset
            let written = connections[index].outbound.withUnsafeBytes {
                Glibc.send(connections[index].fd, $0.baseAddress.map { $0 + offset }, $0.count - offset,
                    Int32(MSG_NOSIGNAL))
            }
            if written > 0 {
                connections[index].outboundOffset += written
            } else if written < 0, errno == EINTR {
                continue
            } else if written < 0, errno == EAGAIN {
                return
            } else {
                drop(index, reason: "send: \(errnoText())")
                return
            }
        }
        connections[index].outbound.removeAll(keepingCapacity: true)
        connections[index].outboundOffset = 0
        watchWritable(index, false)
        if connections[index].isSender { topUp(index) }
    }

    /// Registers `index` for readability, plus writability when `writable`.
    func watchWritable(_ index: Int, _ writable: Bool) {
        guard connections[index].wantsWritable != writable else { return }
        connections[index].wantsWritable = writable
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | (writable ? EPOLLOUT.rawValue : 0)
        event.data.u64 = UInt64(index)
        _ = epoll_ctl(epollFD, EPOLL_CTL_MOD, connections[index].fd, &event)
    }

    /// Closes a connection that failed or that the server closed, and counts it.
    func drop(_ index: Int, reason: String) {
        switch connections[index].state {
        case .connecting, .handshaking:
            result.failedConnects += 1
            coordinator.failed.add(1, ordering: .relaxed)
            connectsInFlight -= 1
            connectsSettled += 1
        case .open where plan != nil && !connections[index].ready:
            result.failedConnects += 1
            coordinator.failed.add(1, ordering: .relaxed)
        case .open where connections[index].role == .stalled:
            stall.disconnectReason = reason
            stall.disconnectedAt = monotonicNanoseconds()
        case .open:
            result.closedByServer += 1
        case .unused, .closed:
            return
        }
        if connections[index].role != .stalled { noteError(reason) }
        close(connections[index].fd)
        connections[index].state = .closed
    }

    /// Keeps the first few error messages for the report.
    func noteError(_ text: String) {
        if result.errors.count < 5 { result.errors.append(text) }
    }

    private func closeAll() {
        for index in 0..<count where connections[index].state != .closed && connections[index].state != .unused {
            close(connections[index].fd)
            connections[index].state = .closed
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
