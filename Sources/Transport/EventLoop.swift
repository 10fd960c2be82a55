import CEpoll
import Dispatch
import Primitives
#if canImport(Glibc)
import Glibc
#endif

/// One serial queue that owns a set of connections: their descriptors, buffers and protocol state.
/// Work for a connection always runs here; other queues hand off with ``execute(_:)``. Socket
/// readiness comes from the loop's ``Poller`` thread, which runs each batch of ready sockets here.
///
/// The loop also owns per-loop scratch memory (the read buffer and the `iovec` array for `writev`)
/// so reads and flushes allocate nothing, and a list of connections with output pending, flushed
/// once per pass (after a read batch, or at the end of a turn of hand-offs) so that many frames
/// queued for one connection leave in one `writev`.
public final class EventLoop: @unchecked Sendable {
    // State below `queue` is owned by `queue` (checked with `assertInLoop()`).

    /// The serial queue that owns this loop's connections.
    public let queue: DispatchQueue
    /// Position of this loop in its group.
    public let index: Int
    /// Bytes written to sockets by this loop's connections (for metrics).
    public let bytesWritten = AtomicCounter()

    /// Reusable read buffer (owned by `queue`).
    let readBuffer: UnsafeMutableRawBufferPointer
    /// Reusable `iovec` array for `writev` (owned by `queue`).
    let iovecs: UnsafeMutablePointer<iovec>
    /// Maximum number of iovecs passed to one `writev` (the kernel's IOV_MAX).
    static let maxIOVecs = 1024
    /// Reusable buffer into which a `writev` gathers a connection's small queued chunks (owned by `queue`).
    let writeStaging: UnsafeMutableRawBufferPointer
    /// Bytes of ``writeStaging``.
    static let writeStagingSize = 64 * 1024
    /// Bytes read per `read` call.
    static let readBufferSize = 64 * 1024

    /// This loop's open connections, each at its ``Connection/slot``: 8 bytes a connection and an array index per
    /// event, where a table by id took about 26 bytes and a hash. A closed connection's slot is reused.
    private var slots: [Connection?] = []
    /// Slots of closed connections, to reuse.
    private var freeSlots: [Int32] = []
    private var openCount = 0
    private var pendingFlush: [Connection] = []
    private var endOfPassWork: [() -> Void] = []
    private var flushScheduled = false
    private var sweepTimer: (any DispatchSourceTimer)?
    /// The epoll thread reporting this loop's socket readiness.
    let poller = Poller()

    init(index: Int, sweepInterval: DispatchTimeInterval) {
        self.index = index
        self.queue = DispatchQueue(label: "canopy.loop.\(index)", qos: .userInitiated)
        self.readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.readBufferSize, alignment: 16)
        self.iovecs = UnsafeMutablePointer<iovec>.allocate(capacity: Self.maxIOVecs)
        self.writeStaging = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.writeStagingSize, alignment: 16)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + sweepInterval, repeating: sweepInterval, leeway: .milliseconds(100))
        timer.setEventHandler { [unowned self] in self.sweep() }
        timer.resume()
        self.sweepTimer = timer
        poller.start(for: self)
    }

    deinit {
        poller.stop()
        sweepTimer?.cancel()
        readBuffer.deallocate()
        iovecs.deallocate()
        writeStaging.deallocate()
    }

    /// Runs `work` on this loop's queue; from inside a ``HandOffBatch``, with the batch's other work for this loop
    /// in one block when the batch ends.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        HandOffBatch.async(work, on: queue)
    }

    /// Runs `work` on this loop's queue `seconds` from now.
    public func execute(after seconds: Double, _ work: @escaping @Sendable () -> Void) {
        queue.asyncAfter(deadline: .now() + seconds, execute: work)
    }

    /// Traps when called off this loop's queue (an ownership bug, never input-driven). Checked in debug builds,
    /// where every test runs: the check costs a thread-local lookup per call, and the fan-out path calls it several
    /// times per delivery.
    @inline(__always)
    public func assertInLoop() {
        #if DEBUG
        dispatchPrecondition(condition: .onQueue(queue))
        #endif
    }

    /// Number of open connections owned by this loop (call on the loop).
    public var connectionCount: Int {
        assertInLoop()
        return openCount
    }

    /// Every open connection owned by this loop (call on the loop).
    public var openConnections: [Connection] {
        assertInLoop()
        return slots.compactMap { $0 }
    }

    // MARK: - Registration and flushing

    func register(_ connection: Connection) {
        assertInLoop()
        if let slot = freeSlots.popLast() {
            slots[Int(slot)] = connection
            connection.slot = slot
        } else {
            connection.slot = Int32(slots.count)
            slots.append(connection)
        }
        openCount += 1
    }

    func unregister(_ connection: Connection) {
        assertInLoop()
        let slot = Int(connection.slot)
        guard slot >= 0, slot < slots.count, slots[slot] === connection else { return }
        slots[slot] = nil
        freeSlots.append(connection.slot)
        connection.slot = -1
        openCount -= 1
    }

    /// The poller token of a connection at `slot`: the slot plus one in the low half (never 0, the poller's stop
    /// token), the low half of the connection's id in the high half.
    static func pollToken(slot: Int32, id: UInt64) -> UInt64 {
        (id << 32) | UInt64(UInt32(bitPattern: slot) &+ 1)
    }

    /// The open connection a poller token names, or `nil` when that connection closed (its slot may be another's).
    private func connection(forToken token: UInt64) -> Connection? {
        let slot = Int(UInt32(truncatingIfNeeded: token)) - 1
        guard slot >= 0, slot < slots.count, let connection = slots[slot],
              UInt32(truncatingIfNeeded: connection.id) == UInt32(truncatingIfNeeded: token >> 32)
        else { return nil }
        return connection
    }

    /// Queues `connection` for the end-of-pass flush.
    func scheduleFlush(_ connection: Connection) {
        pendingFlush.append(connection)
        scheduleEndOfPass()
    }

    /// Runs `work` on this loop at the end of the current pass (after the read batch or hand-off
    /// block in progress), before the flush. Fan-out uses it to collect everything one read batch
    /// publishes and hand it to other loops in one block, so frames coalesce into one `writev`.
    public func runAtEndOfPass(_ work: @escaping () -> Void) {
        assertInLoop()
        endOfPassWork.append(work)
        scheduleEndOfPass()
    }

    private func scheduleEndOfPass() {
        if !flushScheduled {
            flushScheduled = true
            queue.async { [unowned self] in self.flushPending() }
        }
    }

    /// Flushes every connection that had output queued during this pass. Fan-out code calls it at
    /// the end of a hand-off block so the frames leave in one `writev` per connection right away.
    public func flushPending() {
        assertInLoop()
        flushScheduled = false
        while !endOfPassWork.isEmpty {
            let work = endOfPassWork
            endOfPassWork.removeAll(keepingCapacity: true)
            for item in work { item() }
        }
        // What the pass handed to other queues leaves before its output: no answer reaches a peer ahead of the
        // work it reports as submitted.
        HandOffBatch.sendNow()
        while !pendingFlush.isEmpty {
            let batch = pendingFlush
            pendingFlush.removeAll(keepingCapacity: true)
            for connection in batch { connection.flushQueued() }
        }
    }

    /// Handles one batch of ready sockets from the poller, then flushes once for the whole pass.
    func handleReadiness(_ batch: UnsafeBufferPointer<epoll_event>) {
        for event in batch {
            // A connection closed earlier in this batch (or before it) is gone from its slot: its event is stale.
            connection(forToken: event.data.u64)?.handleReadiness(event.events)
        }
        flushPending()
    }

    // MARK: - Deadlines

    /// Checks handshake deadlines, idle timeouts and closing lingers once per sweep interval, and frees the outbound
    /// rings bursts left on connections now drained.
    /// O(connections) per sweep; a timer per connection would cost memory on every idle socket.
    private func sweep() {
        let now = MonotonicClock.nowNanoseconds()
        // By index: a connection closing here empties its slot, and the array is not copied for that.
        var index = 0
        while index < slots.count {
            slots[index]?.checkDeadlines(now: now)
            index += 1
        }
        flushPending()
    }
}

/// A fixed set of event loops (default: one per core); connections are spread round-robin.
public final class EventLoopGroup: Sendable {
    /// The loops, each with its own serial queue.
    public let loops: [EventLoop]
    private let cursor = AtomicCounter()

    /// Creates `count` loops; `sweepInterval` is how often deadlines are checked.
    public init(count: Int = System.coreCount, sweepInterval: DispatchTimeInterval = .milliseconds(250)) {
        loops = (0..<max(1, count)).map { EventLoop(index: $0, sweepInterval: sweepInterval) }
    }

    /// The next loop, round-robin.
    public func next() -> EventLoop {
        loops[Int(cursor.increment() % UInt64(loops.count))]
    }
}

/// Facts about the machine.
public enum System {
    /// Number of online processors.
    public static var coreCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}
