import Synchronization

/// State shared between the threads of one process; everything else is owned by one worker thread.
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
    /// Connections that became ready (upgraded, and listening where the protocol listens), over all workers.
    let opened = Atomic<Int>(0)
    /// Connections that failed before becoming ready, over all workers.
    let failed = Atomic<Int>(0)
    /// Workers whose every connection is ready or failed.
    let connectedWorkers = Atomic<Int>(0)
    /// Workers that finished their part of the workload.
    let finishedWorkers = Atomic<Int>(0)
    /// `monotonicNanoseconds()` when the workload started.
    let startNanoseconds = Atomic<UInt64>(0)
    /// Live totals over all workers, published after each poll for the progress line.
    let delivered = Atomic<Int>(0)
    let acknowledged = Atomic<Int>(0)
    let sent = Atomic<Int>(0)
    /// The origin of the send times writers put into their updates: `monotonicNanoseconds()` when the run (or, with
    /// worker processes, the parent) started, so the times stay small integers (JSON numbers are doubles; these stay
    /// far below 2^53), and every process uses the same one.
    let clockOrigin: UInt64
    private let intervals = Mutex<[IntervalSample]>([])

    init(clockOrigin: UInt64) {
        self.clockOrigin = clockOrigin
    }

    var phase: Phase {
        Phase(rawValue: phaseValue.load(ordering: .acquiring)) ?? .stopping
    }

    /// Starts the workload at `time` (a `monotonicNanoseconds()` reading).
    func start(at time: UInt64) {
        startNanoseconds.store(time, ordering: .relaxed)
        phaseValue.store(Phase.running.rawValue, ordering: .releasing)
    }

    /// Tells every worker to finish.
    func stop() {
        phaseValue.store(Phase.stopping.rawValue, ordering: .releasing)
    }

    /// Hands a finished interval to the reporter.
    func publish(_ sample: IntervalSample) {
        intervals.withLock { $0.append(sample) }
    }

    /// The intervals published since the last call.
    func takeIntervals() -> [IntervalSample] {
        intervals.withLock { samples in
            defer { samples.removeAll() }
            return samples
        }
    }
}
