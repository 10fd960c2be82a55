import Dispatch
import Primitives
#if canImport(Glibc)
import Glibc
#endif

/// One non-blocking TCP connection, owned by its ``EventLoop``'s queue.
///
/// The connection owns the descriptor, a read source (always), a write source (created on the
/// first `EAGAIN`, resumed only while output is pending), and the outbound queue. Writes are
/// queued and flushed with `writev` once per loop pass; a partial write leaves the rest queued
/// until the socket is writable. The descriptor is closed only after both sources' cancel
/// handlers ran, so its number cannot be reused while a registration is still live.
public final class Connection: @unchecked Sendable {
    // Every mutable property is owned by `loop.queue`.

    /// Process-unique id.
    public let id: UInt64
    /// The loop that owns this connection.
    public let loop: EventLoop
    /// The peer's address as text (`127.0.0.1:53312`, `[::1]:53312`).
    public let remoteAddress: String
    /// The protocol layer receiving this connection's events; cleared on close.
    public var handler: (any ConnectionHandler)?
    /// Outbound water marks.
    public var limits = OutboundLimits()
    /// Close (or notify the handler) after this long without reading anything; 0 disables it.
    public var idleTimeoutNanoseconds: UInt64 = 0
    /// A deadline (monotonic ns) the upper layer sets while a handshake is in progress; passing it
    /// closes the connection with `.handshakeTimeout`. `nil` when no handshake is pending.
    public var handshakeDeadline: UInt64?

    /// Called once the descriptor is closed, on the loop (used for live-connection accounting).
    var onRelease: (@Sendable () -> Void)?

    private let fd: Int32
    private var outbound = OutboundQueue()
    private var readSource: (any DispatchSourceRead)?
    private var writeSource: (any DispatchSourceWrite)?
    private var writeSourceResumed = false
    private var readSuspended = false
    private var readPausedByUser = false
    private var flushQueuedFlag = false
    private var aboveLowWater = false
    private var overLimitReported = false
    private var lastReadNanoseconds: UInt64
    private var closeAfterFlushReason: CloseReason?
    private var lingerDeadline: UInt64?
    private(set) public var isClosed = false

    private static let ids = AtomicCounter()

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
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: loop.queue)
        source.setEventHandler { [unowned self] in self.readAvailable() }
        source.setCancelHandler { [self] in self.sourceCancelled() }
        readSource = source
        source.resume()
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
            guard case .processed(let count) = result else { break }
            if count == 0 {
                close(reason: .peerClosed)
                break
            }
            budget -= count
            lastReadNanoseconds = MonotonicClock.nowNanoseconds()
            handler?.connection(self, didRead: UnsafeRawBufferPointer(rebasing: loop.readBuffer[0..<count]))
            // A short read drained the socket: skip the read that would only return EAGAIN (one system call per
            // event saved). Bytes arriving later fire the level-triggered source again.
            if count < loop.readBuffer.count { break }
        }
        loop.flushPending()
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
        guard !isClosed, let source = readSource else { return }
        let shouldSuspend = readPausedByUser || outbound.pendingBytes > limits.highWaterMark
            || closeAfterFlushReason != nil
        if shouldSuspend && !readSuspended {
            source.suspend()
            readSuspended = true
        } else if !shouldSuspend && readSuspended {
            source.resume()
            readSuspended = false
        }
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
        if !flushQueuedFlag && !writeSourceResumed {
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
            let count = outbound.fill(loop.iovecs, capacity: EventLoop.maxIOVecs)
            let result: IOResult<Int>
            do {
                result = try SystemCalls.writev(fd, loop.iovecs, Int32(count))
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
        if writeSourceResumed, let source = writeSource {
            source.suspend()
            writeSourceResumed = false
        }
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
        if writeSource == nil {
            let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: loop.queue)
            source.setEventHandler { [unowned self] in
                self.flushNow()
                self.loop.flushPending()
            }
            source.setCancelHandler { [self] in self.sourceCancelled() }
            writeSource = source
        }
        if !writeSourceResumed, let source = writeSource {
            source.resume()
            writeSourceResumed = true
        }
        if outbound.pendingBytes > limits.lowWaterMark { aboveLowWater = true }
    }

    // MARK: - Closing

    /// Stops reading, flushes what is queued, then closes; gives up after `linger` if the peer does not read.
    public func closeAfterFlush(reason: CloseReason, lingerNanoseconds: UInt64 = 2_000_000_000) {
        loop.assertInLoop()
        guard !isClosed else { return }
        closeAfterFlushReason = reason
        lingerDeadline = MonotonicClock.nowNanoseconds() &+ lingerNanoseconds
        updateReadInterest()
        if outbound.isEmpty { close(reason: reason) } else { flushNow() }
    }

    /// Closes now: cancels both sources; the descriptor is closed in the last cancel handler.
    public func close(reason: CloseReason) {
        loop.assertInLoop()
        guard !isClosed else { return }
        isClosed = true
        loop.unregister(self)
        if let source = writeSource {
            if !writeSourceResumed { source.resume() }  // a suspended source never runs its cancel handler
            writeSourceResumed = true
            source.cancel()
        }
        if let source = readSource {
            if readSuspended { source.resume() }
            readSuspended = false
            source.cancel()
        } else {
            releaseDescriptor()
        }
        let handler = self.handler
        self.handler = nil
        handler?.connectionDidClose(self, reason: reason)
    }

    private var cancelledSources = 0

    private func sourceCancelled() {
        cancelledSources += 1
        let expected = (readSource == nil ? 0 : 1) + (writeSource == nil ? 0 : 1)
        if cancelledSources == expected {
            readSource = nil
            writeSource = nil
            releaseDescriptor()
        }
    }

    private func releaseDescriptor() {
        Glibc.close(fd)
        onRelease?()
        onRelease = nil
    }

    // MARK: - Deadlines

    func checkDeadlines(now: UInt64) {
        if let deadline = lingerDeadline, now >= deadline {
            close(reason: closeAfterFlushReason ?? .slowConsumer)
            return
        }
        if let deadline = handshakeDeadline, now >= deadline {
            close(reason: .handshakeTimeout)
            return
        }
        if idleTimeoutNanoseconds > 0, now &- lastReadNanoseconds >= idleTimeoutNanoseconds {
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
