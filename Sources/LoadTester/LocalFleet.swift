import Glibc
import Synchronization
import TLS

/// The client connections of a run as the reporter drives them: in this process (``LocalFleet``) or spread over
/// worker processes (``ProcessFleet``). Used from the reporting thread only.
protocol Fleet: AnyObject {
    /// Starts opening the connections.
    func startConnecting() throws
    /// Reads what the workers reported since the last call (worker processes' pipes); cheap when there is nothing.
    func pump()
    /// Connections ready and failed so far, and whether every connection is one or the other.
    var connectProgress: (opened: Int, failed: Int, settled: Bool) { get }
    /// Starts the workload at `time` (a `monotonicNanoseconds()` reading).
    func startWorkload(at time: UInt64)
    /// Live totals, and whether every worker finished its part of the workload.
    var live: LiveCounts { get }
    /// Intervals the workers finished since the last call.
    func takeIntervals() -> [IntervalSample]
    /// CPU seconds the clients have used so far (this process, or the worker processes).
    func clientCPUSeconds() -> Double
    /// Stops the workers, waits for them, and returns their merged counts and their last intervals.
    func stop() throws -> (result: WorkerResult, intervals: [IntervalSample])
}

/// Live totals over all workers.
struct LiveCounts: Codable, Sendable {
    var delivered = 0
    var acks = 0
    var sent = 0
    var finished = false
}

/// One process's share of the workers, each on its own thread.
final class LocalFleet: Fleet {
    let coordinator: Coordinator
    private let workers: [Worker]
    private var threads: [pthread_t] = []

    /// Makes the workers of process `slot` of `slots`: worker `slot × threads + t` of `slots × threads` for each
    /// of the configuration's threads.
    init(configuration: BenchConfiguration, slot: Int, slots: Int, clockOrigin: UInt64) throws {
        let server = try configuration.serverURL
        var addresses: [ServerAddress] = []
        for node in try configuration.serverURLs {
            do {
                addresses.append(try ServerAddress(host: node.host, port: node.port))
            } catch {
                throw BenchRunError.unreachable("\(error)")
            }
        }
        let tlsContext = try Self.tlsContext(for: configuration, server: server)
        let plan = RunPlan(configuration)
        let coordinator = Coordinator(clockOrigin: clockOrigin)
        self.coordinator = coordinator
        let threads = configuration.threads
        workers = (0..<threads).map { thread in
            Worker(
                index: slot * threads + thread, count: slots * threads, configuration: configuration, plan: plan,
                server: server, addresses: addresses, tlsContext: tlsContext, coordinator: coordinator)
        }
    }

    /// The client TLS context of a `wss` run.
    static func tlsContext(for configuration: BenchConfiguration, server: ServerURL) throws -> TLSContext? {
        guard server.secure else { return nil }
        do {
            return try TLSContext.client(trustedCAPath: configuration.caFile, verifyPeer: configuration.verifyPeer)
        } catch {
            throw BenchRunError.tls("\(error)")
        }
    }

    func startConnecting() throws {
        threads = try workers.map { worker in try startThread { worker.run() } }
    }

    func pump() {}

    var connectProgress: (opened: Int, failed: Int, settled: Bool) {
        (
            coordinator.opened.load(ordering: .relaxed), coordinator.failed.load(ordering: .relaxed),
            coordinator.connectedWorkers.load(ordering: .relaxed) == workers.count
        )
    }

    func startWorkload(at time: UInt64) {
        coordinator.start(at: time)
    }

    var live: LiveCounts {
        LiveCounts(
            delivered: coordinator.delivered.load(ordering: .relaxed),
            acks: coordinator.acknowledged.load(ordering: .relaxed), sent: coordinator.sent.load(ordering: .relaxed),
            finished: coordinator.finishedWorkers.load(ordering: .relaxed) == workers.count)
    }

    func takeIntervals() -> [IntervalSample] {
        coordinator.takeIntervals()
    }

    func clientCPUSeconds() -> Double {
        ProcessStats.ownCPUSeconds()
    }

    func stop() throws -> (result: WorkerResult, intervals: [IntervalSample]) {
        coordinator.stop()
        for thread in threads {
            pthread_join(thread, nil)
        }
        threads = []
        var merged = WorkerResult()
        for worker in workers { merged.merge(worker.result) }
        return (merged, coordinator.takeIntervals())
    }
}

/// Runs `body` on a new POSIX thread and returns the thread for `pthread_join`.
private func startThread(_ body: @escaping @Sendable () -> Void) throws -> pthread_t {
    final class Box: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(
        &thread, nil,
        { argument in
            guard let argument else { return nil }
            Unmanaged<Box>.fromOpaque(argument).takeRetainedValue().body()
            return nil
        }, box)
    guard status == 0 else {
        Unmanaged<Box>.fromOpaque(box).release()
        throw BenchRunError.system("pthread_create failed (\(status))")
    }
    return thread
}
