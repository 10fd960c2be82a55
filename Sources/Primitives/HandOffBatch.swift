import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Hand-offs from one thread to serial queues, gathered while the thread runs a batch and sent once per queue when
/// the batch ends.
///
/// A thread that completes many requests in one go (a journal's acknowledgements of one group commit, an event
/// loop's pass over its ready sockets, a sequencer's turn) would otherwise hand each one to its queue separately:
/// one `async` per request, and when the consumer drains faster than the producer adds, one thread wake-up per
/// request too. Inside ``run(_:)`` every ``async(_:on:)`` is kept in the thread's batch, per queue and in order,
/// and each queue gets one block with all of its work when the outermost ``run(_:)`` returns.
///
/// Order holds per queue: a queue runs the work of one batch in the order it was added, after everything the
/// thread handed it before the batch. Never wait inside a batch for work handed off in it (with `sync`, a
/// semaphore, a group): that work does not leave before the batch ends.
public final class HandOffBatch {
    private var queues: [DispatchQueue] = []
    private var works: [[@Sendable () -> Void]] = []

    private init() {}

    /// Runs `body` with a batch open on this thread (joining the batch already open, if any), then hands every
    /// queue its work, one block per queue.
    public static func run<Result>(_ body: () throws -> Result) rethrows -> Result {
        guard let threadKey, current == nil else { return try body() }
        let batch = HandOffBatch()
        pthread_setspecific(threadKey, Unmanaged.passUnretained(batch).toOpaque())
        defer {
            pthread_setspecific(threadKey, nil)
            batch.send()
        }
        return try body()
    }

    /// Runs `work` on `queue`: after the batch open on this thread ends, or handed off now when none is open.
    public static func async(_ work: @escaping @Sendable () -> Void, on queue: DispatchQueue) {
        guard let batch = current else { return queue.async(execute: work) }
        batch.add(work, for: queue)
    }

    /// Hands off what the batch open on this thread holds so far, and keeps it open. For a point after which
    /// work handed off must be on its way, because something that does not go through the batch (another thread's
    /// hand-off, a reply from outside) may follow it and must not overtake it.
    public static func sendNow() {
        current?.send()
    }

    /// The batch open on this thread.
    private static var current: HandOffBatch? {
        guard let threadKey else { return nil }
        return pthread_getspecific(threadKey).map { Unmanaged<HandOffBatch>.fromOpaque($0).takeUnretainedValue() }
    }

    private func add(_ work: @escaping @Sendable () -> Void, for queue: DispatchQueue) {
        // A batch reaches few queues (the loops, a sequencer): a scan beats hashing.
        if let index = queues.firstIndex(where: { $0 === queue }) {
            works[index].append(work)
        } else {
            queues.append(queue)
            works.append([work])
        }
    }

    private func send() {
        for (queue, queueWorks) in zip(queues, works) {
            if queueWorks.count == 1 {
                queue.async(execute: queueWorks[0])
            } else {
                queue.async { for work in queueWorks { work() } }
            }
        }
        queues.removeAll(keepingCapacity: true)
        works.removeAll(keepingCapacity: true)
    }
}

/// The thread-specific slot holding each thread's open ``HandOffBatch`` (made once per process); `nil` when the
/// process has no key left (`PTHREAD_KEYS_MAX`), and then every hand-off leaves at once.
private let threadKey: pthread_key_t? = {
    var key = pthread_key_t()
    return pthread_key_create(&key, nil) == 0 ? key : nil
}()
