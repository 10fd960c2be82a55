import Dispatch

/// A value handed to exactly one other queue.
private struct HandedOver<Value>: @unchecked Sendable {
    let value: Value
}

/// Runs `work` on `queue` after `delay` seconds. The API's blocks are ordinary closures, as the SDK's are (so code
/// written for it compiles in both language modes), hence not `Sendable`; each is handed to one queue and never run
/// concurrently with itself, which is the guarantee `Sendable` would give.
func run(on queue: DispatchQueue, after delay: Double, _ work: @escaping () -> Void) {
    let handed = HandedOver(value: work)
    queue.asyncAfter(deadline: .now() + delay) { handed.value() }
}

/// Closures for one serial queue, run there in the order posted, many per hand-off: posting while a hand-off is
/// pending adds to it instead of making another (one `async` and at most one thread wake-up for a burst, not one
/// each). Any thread may post; the closures are not `Sendable` for the reason
/// ``run(on:after:_:)`` gives.
final class OrderedHandOff: @unchecked Sendable {  // `pending` and `scheduled` are guarded by `lock`
    let queue: DispatchQueue
    private let lock = Lock()
    /// A closure in a struct: an array of bare closures stores each one behind a thunk of its own.
    private struct Work {
        let run: () -> Void
    }

    private var pending: [Work] = []
    /// Whether a block that will run `pending` is on the queue.
    private var scheduled = false
    /// The storage of the last batch run, emptied, to become `pending` next: a batch of a hundred closures takes
    /// kilobytes, and allocating that anew per batch made malloc consolidate its free lists each time. Touched
    /// only on the queue.
    private var spare: [Work] = []

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Runs `work` on the queue after everything posted before it.
    func post(_ work: @escaping () -> Void) {
        lock.lock()
        pending.append(Work(run: work))
        let schedule = !scheduled
        scheduled = true
        lock.unlock()
        if schedule { queue.async { [self] in runPending() } }
    }

    /// Runs what was posted and has not run yet; called on the queue. A caller on the queue that must see the
    /// effects of earlier posts (a synchronous read) calls it first; the hand-off block then finds less to do.
    func runPending() {
        dispatchPrecondition(condition: .onQueue(queue))
        var batch: [Work] = []
        swap(&batch, &spare)
        lock.lock()
        swap(&batch, &pending)
        scheduled = false
        lock.unlock()
        for work in batch { work.run() }
        batch.removeAll(keepingCapacity: true)
        spare = batch
    }
}
