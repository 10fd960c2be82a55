import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A descriptor the loop polls: the socket of a connection.
protocol LoopDescriptor: AnyObject {
    /// The descriptor to poll, `-1` once closed (the loop then drops it).
    var descriptor: Int32 { get }
    /// Whether the loop should wake when the descriptor is writable (connecting, or output the kernel refused).
    var wantsWritable: Bool { get }
    /// Readable (or hung up, or failed): read it.
    func readable()
    /// Writable, while ``wantsWritable``.
    func writable()
    /// The end of a turn of the loop: send what the turn queued.
    func endOfTurn()
}

/// A thread of its own that owns a connection and the state above it: one `poll` over the socket and a wake-up
/// pipe, then the bytes read, the requests posted by other threads, the timers due, and at the end of each turn
/// the callbacks raised and one `send` of everything queued.
///
/// Other threads talk to it only through ``post(_:)``, which writes to the pipe only when the loop sleeps (a burst
/// of posts while it works costs no system call). Everything else is called on the loop's thread.
final class ConnectionLoop: @unchecked Sendable {
    // `inbox`, `sleeping`, `wakePending` and `stopping` are guarded by `lock`; the rest is the loop thread's.

    /// A closure in a struct: an array of bare closures stores each behind a thunk of its own.
    struct Work {
        let run: () -> Void
    }

    private struct Timer {
        let id: Int
        let deadline: UInt64
        let work: () -> Void
    }

    private let lock = Lock()
    private var inbox: [Work] = []
    private var sleeping = false
    private var wakePending = false
    private var stopping = false
    /// The emptied storage of the last batch of posts, reused for the next (batches of a hundred closures take
    /// kilobytes; allocating them anew per batch made malloc consolidate its free lists).
    private var spare: [Work] = []
    private let wakeReader: Int32
    private let wakeWriter: Int32
    private var timers: [Timer] = []
    private var nextTimerID = 1
    private var descriptors: [any LoopDescriptor] = []
    private var pollSet: [pollfd] = []
    /// Runs at the end of every turn, before the descriptors send (the engine's callbacks, which may post).
    var turnEnded: (() -> Void)?
    #if DEBUG
    private var loopThread: pthread_t?
    #endif

    /// Starts the loop's thread. Should the system have no descriptor left for the pipe, the loop polls every
    /// ``fallbackPollMilliseconds`` instead of being woken; should it have no thread left, the loop runs on one of
    /// Dispatch's.
    init() {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            }
        }
        wakeReader = ends[0]
        wakeWriter = ends[1]
        if !Self.startThread(running: self) {
            DispatchQueue.global().async { [self] in run() }
        }
    }

    /// How long the loop sleeps at most without a wake-up pipe.
    private static let fallbackPollMilliseconds: Int32 = 10

    /// Runs `work` on the loop's thread after everything posted before it; any thread may post.
    func post(_ work: @escaping () -> Void) {
        lock.lock()
        inbox.append(Work(run: work))
        let wake = sleeping && !wakePending
        if wake { wakePending = true }
        lock.unlock()
        if wake { wakeUp() }
    }

    /// Ends the loop once the work posted before it ran: the descriptors are left to their owners, who closed
    /// them in that work, and the thread exits.
    func stop() {
        lock.lock()
        stopping = true
        let wake = sleeping && !wakePending
        if wake { wakePending = true }
        lock.unlock()
        if wake { wakeUp() }
    }

    /// Checks (in debug builds) that the caller is on the loop's thread.
    func assertOnLoop() {
        #if DEBUG
        assert(loopThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false, "not on the connection's thread")
        #endif
    }

    // MARK: - On the loop's thread

    /// Polls `descriptor` from the next turn on, until its descriptor is `-1`.
    func watch(_ descriptor: any LoopDescriptor) {
        assertOnLoop()
        descriptors.append(descriptor)
    }

    /// Runs `work` on the loop after `seconds`; returns an id for ``cancelTimer(_:)``.
    @discardableResult
    func after(_ seconds: Double, _ work: @escaping () -> Void) -> Int {
        assertOnLoop()
        let id = nextTimerID
        nextTimerID += 1
        let delay = UInt64(max(0, seconds) * 1e9)
        let deadline = DispatchTime.now().uptimeNanoseconds &+ delay
        let index = timers.firstIndex { $0.deadline > deadline } ?? timers.endIndex
        timers.insert(Timer(id: id, deadline: deadline, work: work), at: index)
        return id
    }

    /// Cancels the timer `id` if it has not run.
    func cancelTimer(_ id: Int) {
        assertOnLoop()
        timers.removeAll { $0.id == id }
    }

    private func run() {
        #if DEBUG
        loopThread = pthread_self()
        #endif
        while turn() {}
        // The engine's hook holds what holds the loop.
        turnEnded = nil
        if wakeReader >= 0 { Self.closeDescriptor(wakeReader) }
        if wakeWriter >= 0 { Self.closeDescriptor(wakeWriter) }
    }

    /// One turn: poll, read, run the posts and the timers due, raise, send. Returns `false` once stopped.
    private func turn() -> Bool {
        descriptors.removeAll { $0.descriptor < 0 }
        lock.lock()
        if stopping, inbox.isEmpty {
            lock.unlock()
            return false
        }
        let idle = inbox.isEmpty
        sleeping = idle
        lock.unlock()
        var timeout = idle ? millisecondsToNextTimer() : 0
        if wakeReader < 0, timeout < 0 || timeout > Self.fallbackPollMilliseconds { timeout = Self.fallbackPollMilliseconds }
        poll(timeout: timeout)
        lock.lock()
        sleeping = false
        let drain = wakePending
        wakePending = false
        lock.unlock()
        if drain { drainWakeUps() }
        for (index, descriptor) in zip(descriptors.indices, descriptors) where index < pollSet.count {
            let events = pollSet[index].revents
            guard events != 0, descriptor.descriptor == pollSet[index].fd else { continue }
            if events & Int16(POLLOUT) != 0, descriptor.wantsWritable { descriptor.writable() }
            if events & Int16(POLLIN | POLLHUP | POLLERR) != 0, descriptor.descriptor >= 0 { descriptor.readable() }
        }
        runTimersDue()
        // Posts made while the callbacks ran (an app answering acknowledgements with writes) go out in this turn's
        // send; a few rounds at most, so a busy poster cannot keep the loop from polling.
        for _ in 0..<4 {
            runInbox()
            turnEnded?()
            if !hasPosts() { break }
        }
        for descriptor in descriptors where descriptor.descriptor >= 0 { descriptor.endOfTurn() }
        return true
    }

    private func hasPosts() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return !inbox.isEmpty
    }

    private func poll(timeout: Int32) {
        pollSet.removeAll(keepingCapacity: true)
        pollSet.append(pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0))
        for descriptor in descriptors {
            let events = Int16(POLLIN) | (descriptor.wantsWritable ? Int16(POLLOUT) : 0)
            pollSet.append(pollfd(fd: descriptor.descriptor, events: events, revents: 0))
        }
        let ready = pollSet.withUnsafeMutableBufferPointer { set in
            #if canImport(Glibc)
            Glibc.poll(set.baseAddress, nfds_t(set.count), timeout)
            #else
            Darwin.poll(set.baseAddress, nfds_t(set.count), timeout)
            #endif
        }
        // Index 0 is the pipe: the descriptors' results follow, in order.
        pollSet.removeFirst()
        if ready <= 0 {
            for index in pollSet.indices { pollSet[index].revents = 0 }
        }
    }

    private func millisecondsToNextTimer() -> Int32 {
        guard let first = timers.first else { return -1 }
        let now = DispatchTime.now().uptimeNanoseconds
        guard first.deadline > now else { return 0 }
        // Rounded up, so the loop does not wake just before the deadline and spin.
        return Int32(min((first.deadline - now + 999_999) / 1_000_000, UInt64(Int32.max)))
    }

    private func runInbox() {
        var batch: [Work] = []
        swap(&batch, &spare)
        lock.lock()
        swap(&batch, &inbox)
        lock.unlock()
        for work in batch { work.run() }
        batch.removeAll(keepingCapacity: true)
        spare = batch
    }

    /// Runs the timers due now, one at a time, so that a timer's work may cancel another that is also due.
    private func runTimersDue() {
        guard !timers.isEmpty else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        while let first = timers.first, first.deadline <= now {
            timers.removeFirst()
            first.work()
        }
    }

    private func wakeUp() {
        guard wakeWriter >= 0 else { return }
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)
    }

    private func drainWakeUps() {
        guard wakeReader >= 0 else { return }
        var bytes: (UInt64, UInt64) = (0, 0)
        while withUnsafeMutableBytes(of: &bytes, { read(wakeReader, $0.baseAddress, $0.count) }) > 0 {}
    }

    // MARK: - The thread

    /// Starts a detached thread running `loop` (the thread holds it until the loop ends).
    private static func startThread(running loop: ConnectionLoop) -> Bool {
        let retained = Unmanaged.passRetained(loop).toOpaque()
        #if canImport(Glibc)
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            Unmanaged<ConnectionLoop>.fromOpaque(argument).takeRetainedValue().run()
            return nil
        }, retained)
        #else
        var thread: pthread_t?
        let status = pthread_create(&thread, nil, { argument in
            Unmanaged<ConnectionLoop>.fromOpaque(argument).takeRetainedValue().run()
            return nil
        }, retained)
        #endif
        guard status == 0 else {
            Unmanaged<ConnectionLoop>.fromOpaque(retained).release()
            return false
        }
        #if canImport(Glibc)
        pthread_detach(thread)
        #else
        if let thread { pthread_detach(thread) }
        #endif
        return true
    }

    static func closeDescriptor(_ descriptor: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #else
        _ = Darwin.close(descriptor)
        #endif
    }
}
