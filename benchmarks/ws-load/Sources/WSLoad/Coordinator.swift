import Synchronization

/// State shared between the main thread and the worker threads; everything else is owned by one worker.
final class Coordinator: Sendable {
    /// The phases of a run, in order.
    enum Phase: Int {
        /// Workers open their connections.
        case connecting = 0
        /// All connections are open; workers drive the workload.
        case running = 1
        /// The workload is over (or aborted); workers finish and close their connections.
        case stopping = 2
    }

    private let phaseValue = Atomic<Int>(Phase.connecting.rawValue)
    /// Connections whose upgrade completed, over all workers.
    let opened = Atomic<Int>(0)
    /// Connections that failed before their upgrade completed, over all workers.
    let failed = Atomic<Int>(0)
    /// Workers that finished their part of the workload (broadcast: all their expected messages arrived).
    let finishedWorkers = Atomic<Int>(0)
    /// `monotonicNanoseconds()` when the workload started (the first message may be sent from then on).
    let startNanoseconds = Atomic<UInt64>(0)
    /// Firebase modes: puts acknowledged (with any status) over all writers.
    let acknowledged = Atomic<Int>(0)
    /// Firebase modes: deliveries so far over all workers, published after each poll for the progress lines.
    let delivered = Atomic<Int>(0)
    /// The origin of the send times writers put into their updates: `monotonicNanoseconds()` at start-up, so
    /// that the times stay small integers (JSON numbers are doubles; these stay far below 2^53).
    let clockOrigin = monotonicNanoseconds()

    var phase: Phase {
        Phase(rawValue: phaseValue.load(ordering: .acquiring)) ?? .stopping
    }

    /// Starts the workload now and returns the start time.
    func start() -> UInt64 {
        let now = monotonicNanoseconds()
        startNanoseconds.store(now, ordering: .relaxed)
        phaseValue.store(Phase.running.rawValue, ordering: .releasing)
        return now
    }

    /// Tells every worker to finish.
    func stop() {
        phaseValue.store(Phase.stopping.rawValue, ordering: .releasing)
    }
}
