import CEpoll
import Dispatch
import Primitives
#if canImport(Glibc)
import Glibc
#endif

/// Socket readiness for one ``EventLoop``: a dedicated thread waits in `epoll_wait` and runs each batch of ready
/// sockets on the loop's queue (`queue.sync`, so the handlers run inline on the waiting thread whenever the queue is
/// idle, and queue ownership holds as before).
///
/// Compared with a Dispatch source per socket this saves the per-event re-arming system calls libdispatch makes and
/// ~600 bytes per idle connection, and one batch of events becomes one loop pass, flushed once.
/// Registrations are level-triggered and keyed by a token (the connection's slot in its loop and its id), never by
/// descriptor number, so an event that arrives for a connection closed earlier in the same batch finds nothing and is
/// dropped.
final class Poller: @unchecked Sendable {
    // `epollFD` and `wakeFD` are immutable; `loop` is set once before the thread starts.

    /// Events per `epoll_wait`.
    static let batchCapacity = 256
    /// The token of the wake-up descriptor, which only ever means "stop".
    private static let stopToken: UInt64 = 0

    private let epollFD: Int32
    private let wakeFD: Int32
    private weak var loop: EventLoop?

    init() {
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        precondition(epollFD >= 0 && wakeFD >= 0, "epoll_create1/eventfd failed: errno \(errno)")  // not input
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = Self.stopToken
        _ = epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event)
    }

    /// Starts the waiting thread for `loop` (which must outlive nothing: the thread holds it weakly and ends when
    /// ``stop()`` is called).
    func start(for loop: EventLoop) {
        self.loop = loop
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            Unmanaged<Poller>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        precondition(created == 0, "pthread_create failed: \(created)")  // resource exhaustion at start-up, not input
        pthread_detach(thread)
    }

    /// Ends the waiting thread; it closes the descriptors on its way out.
    func stop() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, MemoryLayout<UInt64>.size)
    }

    /// Watches `fd` for `events` (`EPOLLIN`, `EPOLLOUT`), reporting `token`.
    func add(_ fd: Int32, token: UInt64, events: UInt32) {
        control(EPOLL_CTL_ADD, fd, token: token, events: events)
    }

    /// Changes what `fd` is watched for.
    func modify(_ fd: Int32, token: UInt64, events: UInt32) {
        control(EPOLL_CTL_MOD, fd, token: token, events: events)
    }

    /// Stops watching `fd` (call before closing it).
    func remove(_ fd: Int32) {
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
    }

    private func control(_ operation: Int32, _ fd: Int32, token: UInt64, events: UInt32) {
        var event = epoll_event()
        event.events = events
        event.data.u64 = token
        _ = epoll_ctl(epollFD, operation, fd, &event)
    }

    private func run() {
        canopy_name_current_thread("canopy-poll")
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: Self.batchCapacity)
        defer {
            events.deallocate()
            Glibc.close(wakeFD)
            Glibc.close(epollFD)
        }
        while true {
            let ready = epoll_wait(epollFD, events, Int32(Self.batchCapacity), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            let batch = UnsafeBufferPointer(start: events, count: Int(ready))
            if batch.contains(where: { $0.data.u64 == Self.stopToken }) { return }
            guard let loop else { return }
            // One pass hands each other queue (a sequencer, another loop) its work once, when the pass ends.
            loop.queue.sync { HandOffBatch.run { loop.handleReadiness(batch) } }
        }
    }
}
