import CEpoll
import Dispatch
import Primitives
#if canImport(Glibc)
import Glibc
#endif

/// One non-blocking TCP connection, owned by its ``EventLoop``'s queue.
///
/// The connection owns the descriptor, its registration with the loop's ``Poller`` (read interest
/// while reading is wanted, write interest only while output waits for the socket), and the
/// outbound queue. Writes are queued and flushed with `writev` once per loop pass; a partial write
/// leaves the rest queued until the socket is writable. Closing deregisters, then closes the
/// descriptor; readiness is keyed by the connection's slot and id, so a reused descriptor number cannot
/// reach a closed connection.
public final class Connection: @unchecked Sendable {
    // Every mutable property is owned by `loop.queue`.

    /// Process-unique id.
    public let id: UInt64
    /// The loop that owns this connection.
    public let loop: EventLoop
    /// The peer's address as text (`127.0.0.1:53312`, `[::1]:53312`).
    public let remoteAddress: String
    // The stored properties are ordered by size, so that they pack without padding: an idle connection pays for
    // every byte here.

    /// The protocol layer receiving this connection's events; cleared on close.
    public var handler: (any ConnectionHandler)?
    /// Water marks, idle timeout and inbound rate limit, shared with the server's other connections. Set before
    /// ``start()``.
    public var policy = ConnectionPolicy.standard {
        didSet {
            inboundBucket = policy.inboundRateLimit.map { InboundBucket(limit: $0, now: MonotonicClock.nowNanoseconds()) }
        }
    }
    /// The listener's gauge of live connections, counted down once the descriptor is closed.
    var liveCount: LiveCount?
    private var outbound = OutboundQueue()
    private var lastReadNanoseconds: UInt64
    /// ``handshakeDeadline``, 0 for none (an optional would take 16 bytes).
    private var handshakeDeadlineNanoseconds: UInt64 = 0
    /// When a connection closing after its last flush is closed anyway (monotonic ns), 0 for none.
    private var lingerDeadlineNanoseconds: UInt64 = 0
    private var inboundBucket: InboundBucket?
    /// Set by ``closeAfterFlush(reason:lingerNanoseconds:)``; behind a reference, as most connections never close
    /// that way and an idle one should not carry the room for a reason inline.
    private var closing: ClosingAfterFlush?
    private let fd: Int32
    /// Where the loop holds the connection while it is open (-1 before ``start()`` and after closing); with the
    /// id, the poller's token.
    var slot: Int32 = -1
    /// The readiness the poller watches for (`EPOLLIN`, `EPOLLOUT`); ``unregistered`` before ``start()`` and after
    /// closing (an optional would take a byte more, and the connection's allocation 16 more).
    private var registeredEvents = Connection.unregistered
    /// Whether the policy's idle timeout is set aside (a streaming response keeps the connection busy itself).
    public var idleTimeoutSuspended = false
    private var waitingForWritable = false
    private var readSuspended = false
    private var readPausedByUser = false
    private var flushQueuedFlag = false
    private var aboveLowWater = false
    private var overLimitReported = false
    private(set) public var isClosed = false

    /// Why the connection closes once its output is out, if it does.
    private var closeAfterFlushReason: CloseReason? { closing?.reason }

    /// Outbound water marks (the policy's).
    public var limits: OutboundLimits { policy.limits }

    /// A deadline (monotonic ns) the upper layer sets while a handshake is in progress; passing it
    /// closes the connection with `.handshakeTimeout`. `nil` when no handshake is pending.
    public var handshakeDeadline: UInt64? {
        get { handshakeDeadlineNanoseconds == 0 ? nil : handshakeDeadlineNanoseconds }
        set { handshakeDeadlineNanoseconds = newValue.map { max($0, 1) } ?? 0 }
    }

    private static let ids = AtomicCounter()
    /// ``registeredEvents`` when the descriptor is not registered: a mask the connection never asks for.
    private static let unregistered = UInt32.max

    init(fd: Int32, loop: EventLoop, remoteAddress: String) {
        self.id = Connection.ids.increment() + 1
        self.fd = fd
        self.loop = loop
        self.remoteAddress = remoteAddress
        self.lastReadNanoseconds = MonotonicClock.nowNanoseconds()
    }

    /// Unwritten outbound bytes.
    public var pendingOutboundBytes: Int { outbound.pendingBytes }

    // MARK: - Starting

    /// Registers with the loop and starts reading. Call on the loop after setting ``handler``.
    func start() {
        loop.assertInLoop()
        loop.register(self)
        let events = wantedEvents
        registeredEvents = events
        loop.poller.add(fd, token: EventLoop.pollToken(slot: slot, id: id), events: events)
    }

    /// Handles readiness reported by the poller (`events` from `epoll_wait`); called by the loop.
    func handleReadiness(_ events: UInt32) {
        let failed = events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0
        if waitingForWritable && (events & EPOLLOUT.rawValue != 0 || failed) { flushNow() }
        if isClosed { return }
        if !readSuspended && (events & EPOLLIN.rawValue != 0 || failed) {
            readAvailable()
        } else if failed {
            // Neither reading nor writing: a reset or hang-up would be reported again and again.
            close(reason: .peerClosed)
        }
    }

    /// The readiness this connection needs now: input unless reading is suspended, output while it waits to write.
    private var wantedEvents: UInt32 {
        (readSuspended ? 0 : EPOLLIN.rawValue) | (waitingForWritable ? EPOLLOUT.rawValue : 0)
    }

    /// Registers the readiness this connection now needs, when it changed (before ``start()`` it is only noted).
    private func updatePollerInterest() {
        let registered = registeredEvents
        guard !isClosed, registered != Connection.unregistered else { return }
        let wanted = wantedEvents
        if wanted != registered {
            registeredEvents = wanted
            loop.poller.modify(fd, token: EventLoop.pollToken(slot: slot, id: id), events: wanted)
        }
    }

    // MARK: - Reading

    private func readAvailable() {
        var budget = 1 << 20  // fairness: at most 1 MiB per event; the level-triggered source fires again
        while !isClosed && !readSuspended && budget > 0 {
            let result: IOResult<Int>
            do {
                result = try SystemCalls.read(fd, into: loop.readBuffer)
            } catch {
                close(reason: .ioError(error))
                break
            }
            guard case .processed(let count) = result else {
                inboundBucket?.socketDrained()
                break
            }
            if count == 0 {
                close(reason: .peerClosed)
                break
            }
            budget -= count
            lastReadNanoseconds = MonotonicClock.nowNanoseconds()
            if let limit = policy.inboundRateLimit, inboundBucket?.take(count, now: lastReadNanoseconds, limit: limit) == true {
                updateReadInterest()
            }
            handler?.connection(self, didRead: UnsafeRawBufferPointer(rebasing: loop.readBuffer[0..<count]))
            // A short read drained the socket: skip the read that would only return EAGAIN (one system call per
            // event saved). Bytes arriving later are reported again (level-triggered).
            if count < loop.readBuffer.count {
                inboundBucket?.socketDrained()
                break
            }
        }
    }

    /// Stops reading from the peer until ``resumeReading()``.
    public func pauseReading() {
        loop.assertInLoop()
        readPausedByUser = true
        updateReadInterest()
    }

    /// Resumes reading after ``pauseReading()``.
    public func resumeReading() {
        loop.assertInLoop()
        readPausedByUser = false
        updateReadInterest()
    }

    private func updateReadInterest() {
        guard !isClosed else { return }
        readSuspended = readPausedByUser || outbound.pendingBytes > limits.highWaterMark
            || closeAfterFlushReason != nil || inboundBucket?.isEmpty == true
        updatePollerInterest()
    }

    // MARK: - Writing

    /// Queues a chunk (shared, not copied) for the end-of-pass flush.
    public func write(_ chunk: ByteChunk) {
        loop.assertInLoop()
        guard !isClosed else { return }
        outbound.append(chunk)
        afterEnqueue()
    }

    /// Queues bytes (copied once into a chunk) for the end-of-pass flush.
    public func write(_ bytes: [UInt8]) {
        write(ByteChunk(copying: bytes))
    }

    /// Drops queued output that has not started to go out; a partly written chunk is kept so the
    /// byte stream stays well-formed. Used before a slow consumer's close frame.
    public func discardUnstartedOutput() {
        loop.assertInLoop()
        outbound.discardUnstarted()
    }

    private func afterEnqueue() {
        if outbound.backlogBytes > limits.hardLimit && !overLimitReported {
            overLimitReported = true
            if let handler { handler.connectionDidExceedOutboundLimit(self) } else { close(reason: .slowConsumer) }
            if isClosed { return }
        }
        if outbound.pendingBytes > limits.lowWaterMark { aboveLowWater = true }
        if !flushQueuedFlag && !waitingForWritable {
            flushQueuedFlag = true
            loop.scheduleFlush(self)
        }
    }

    /// Called by the loop's end-of-pass flush.
    func flushQueued() {
        flushQueuedFlag = false
        flushNow()
    }

    /// Writes as much queued output as the socket takes right now.
    public func flushNow() {
        loop.assertInLoop()
        guard !isClosed else { return }
        while !outbound.isEmpty {
            let count = outbound.fill(loop.iovecs, capacity: EventLoop.maxIOVecs, staging: loop.writeStaging)
            let result: IOResult<Int>
            do {
                // One buffer (a lone chunk, or every small one gathered) goes by `send`, cheaper than `writev`.
                result = try count == 1
                    ? SystemCalls.send(fd, loop.iovecs[0].iov_base, loop.iovecs[0].iov_len)
                    : SystemCalls.writev(fd, loop.iovecs, Int32(count))
            } catch {
                close(reason: .ioError(error))
                return
            }
            guard case .processed(let written) = result else {
                waitForWritable()
                updateReadInterest()
                return
            }
            outbound.consume(written)
            loop.bytesWritten.add(UInt64(written))
        }
        // Everything went out.
        waitingForWritable = false
        overLimitReported = false
        if let reason = closeAfterFlushReason {
            close(reason: reason)
            return
        }
        updateReadInterest()
        if aboveLowWater {
            aboveLowWater = false
            handler?.connectionDidDrain(self)
        }
    }

    private func waitForWritable() {
        waitingForWritable = true
        if outbound.pendingBytes > limits.lowWaterMark { aboveLowWater = true }
    }

    // MARK: - Closing

    /// Stops reading, flushes what is queued, then closes; gives up after `linger` if the peer does not read.
    public func closeAfterFlush(reason: CloseReason, lingerNanoseconds: UInt64 = 2_000_000_000) {
        loop.assertInLoop()
        guard !isClosed else { return }
        closing = ClosingAfterFlush(reason: reason)
        lingerDeadlineNanoseconds = max(MonotonicClock.nowNanoseconds() &+ lingerNanoseconds, 1)
        updateReadInterest()
        if outbound.isEmpty { close(reason: reason) } else { flushNow() }
    }

    /// Closes now: deregisters from the poller, tells the handler and the accounting, then closes the descriptor
    /// (last, so that whatever the peer observes after its end of stream is already counted).
    public func close(reason: CloseReason) {
        loop.assertInLoop()
        guard !isClosed else { return }
        isClosed = true
        loop.unregister(self)
        if registeredEvents != Connection.unregistered { loop.poller.remove(fd) }
        registeredEvents = Connection.unregistered
        let handler = self.handler
        self.handler = nil
        handler?.connectionDidClose(self, reason: reason)
        liveCount?.add(-1)
        liveCount = nil
        Glibc.close(fd)
    }

    // MARK: - Deadlines

    /// The loop's sweep: frees the room a burst of output left in the queue, then checks the deadlines.
    func checkDeadlines(now: UInt64) {
        outbound.releaseSpareCapacity()
        if lingerDeadlineNanoseconds != 0, now >= lingerDeadlineNanoseconds {
            close(reason: closeAfterFlushReason ?? .slowConsumer)
            return
        }
        if handshakeDeadlineNanoseconds != 0, now >= handshakeDeadlineNanoseconds {
            close(reason: .handshakeTimeout)
            return
        }
        if inboundBucket?.isEmpty == true, let limit = policy.inboundRateLimit {
            inboundBucket?.refill(now: now, limit: limit)
            if inboundBucket?.isThrottledTooLong(now: now, limit: limit) == true {
                if let handler { handler.connectionDidExceedInboundRate(self) } else { close(reason: .inboundRateExceeded) }
                return
            }
            if inboundBucket?.isEmpty == false { updateReadInterest() }
            // Waiting for the bucket is not idleness.
            lastReadNanoseconds = now
        }
        let idleTimeout = policy.idleTimeoutNanoseconds
        if idleTimeout > 0, !idleTimeoutSuspended, now &- lastReadNanoseconds >= idleTimeout {
            lastReadNanoseconds = now
            if let handler { handler.connectionDidBecomeIdle(self) } else { close(reason: .idleTimeout) }
        }
    }

    /// Asks the handler to say goodbye; used by graceful shutdown.
    public func shutDown() {
        loop.assertInLoop()
        guard !isClosed else { return }
        if let handler { handler.connectionShouldShutDown(self) } else { close(reason: .shutdown) }
    }
}

/// Why a connection closes after its last flush (``Connection/closeAfterFlush(reason:lingerNanoseconds:)``).
private final class ClosingAfterFlush {
    let reason: CloseReason

    init(reason: CloseReason) {
        self.reason = reason
    }
}
