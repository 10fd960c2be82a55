import TLS

/// Reads the server's CPU time and memory (`--server-pid`) and metrics (`--metrics-url`) around the workload,
/// from the reporting thread.
struct ServerObserver {
    /// The counters whose deltas prove that an update is encoded once, not once per subscriber.
    static let encodedCounter = "canopy_push_frames_encoded_total"
    static let deliveredCounter = "canopy_push_frames_delivered_total"
    /// The standard Prometheus name of a process's resident memory, used when no PID is given.
    static let residentGauge = "process_resident_memory_bytes"

    private let pid: Int?
    private let metrics: BlockingHTTP?
    private var cpuAtStart: (user: Double, kernel: Double)?
    private var metricsBefore: [String: Double]?
    private var nextSample: UInt64 = 0
    private(set) var figures = BenchReport.ServerFigures(metricDeltas: [:])

    init(configuration: BenchConfiguration, tlsContext: TLSContext?) {
        pid = configuration.serverPID
        do {
            metrics = try configuration.metricsURL.map { try BlockingHTTP(url: $0, tlsContext: tlsContext) }
        } catch {
            metrics = nil
            figures.metricsError = "\(error)"
        }
    }

    /// Before any connection: the baseline memory.
    mutating func beforeConnecting() {
        figures.residentBeforeBytes = resident(metrics: metrics.flatMap { try? fetch($0) })
    }

    /// Once connected, as the workload starts: memory, CPU and metrics.
    mutating func workloadStarts() {
        if let metrics {
            do {
                metricsBefore = try fetch(metrics)
            } catch {
                figures.metricsError = "\(error)"
            }
        }
        figures.residentConnectedBytes = resident(metrics: metricsBefore)
        figures.residentMaxBytes = figures.residentConnectedBytes
        cpuAtStart = pid.flatMap { ProcessStats.cpuTimes(pid: $0) }
    }

    /// The server's resident memory now, when a PID was given.
    var residentNow: Int? {
        pid.flatMap { ProcessStats.memory(pid: $0)?.resident }
    }

    /// Samples the memory every 100 ms.
    mutating func sample(now: UInt64) {
        guard let pid, now >= nextSample else { return }
        nextSample = now + 100_000_000
        if let memory = ProcessStats.memory(pid: pid) {
            figures.residentMaxBytes = max(figures.residentMaxBytes ?? 0, memory.resident)
        }
    }

    /// As the workload ends, before any connection closes: CPU, memory and the metrics' deltas.
    mutating func workloadEnds() {
        if let pid, let start = cpuAtStart, let end = ProcessStats.cpuTimes(pid: pid) {
            let used = Self.cpuUsed(from: start, to: end)
            figures.cpuSeconds = used.total
            figures.kernelCPUSeconds = used.kernel
        }
        var metricsAfter: [String: Double]?
        if let metrics, metricsBefore != nil {
            do {
                metricsAfter = try fetch(metrics)
            } catch {
                figures.metricsError = "\(error)"
            }
        }
        if let pid, let memory = ProcessStats.memory(pid: pid) {
            figures.residentEndBytes = memory.resident
            figures.residentPeakBytes = memory.peak
            figures.residentMaxBytes = max(figures.residentMaxBytes ?? 0, memory.resident)
        } else {
            figures.residentEndBytes = resident(metrics: metricsAfter)
        }
        guard let before = metricsBefore, let after = metricsAfter else { return }
        figures.framesEncoded = after[Self.encodedCounter].map { Int($0 - (before[Self.encodedCounter] ?? 0)) }
        figures.framesDelivered = after[Self.deliveredCounter].map { Int($0 - (before[Self.deliveredCounter] ?? 0)) }
        for name in after.keys where name.hasSuffix("_total") && after[name] != before[name] {
            figures.metricDeltas[name] = (after[name] ?? 0) - (before[name] ?? 0)
        }
    }

    /// The CPU seconds a process used between two readings of its times, and the kernel's part of them. The
    /// kernel's difference is added to the user's, not the totals subtracted: the totals' sums round apart from the
    /// kernel's own difference, and a run with no user time reported a kernel share above the total (500 against
    /// 499.9999999999999 ns per delivery).
    static func cpuUsed(from start: (user: Double, kernel: Double), to end: (user: Double, kernel: Double))
        -> (total: Double, kernel: Double)
    {
        let kernel = end.kernel - start.kernel
        return ((end.user - start.user) + kernel, kernel)
    }

    /// The figures, with the per-delivery CPU and per-connection memory for `deliveries` and `opened`.
    func figures(deliveries: Int, opened: Int) -> BenchReport.ServerFigures {
        var figures = self.figures
        if let cpu = figures.cpuSeconds, deliveries > 0 {
            figures.cpuNanosecondsPerDelivery = cpu * 1e9 / Double(deliveries)
        }
        if let kernel = figures.kernelCPUSeconds, deliveries > 0 {
            figures.kernelCPUNanosecondsPerDelivery = kernel * 1e9 / Double(deliveries)
        }
        if let before = figures.residentBeforeBytes, let end = figures.residentEndBytes, opened > 0 {
            figures.residentPerConnectionBytes = Double(end - before) / Double(opened)
        }
        return figures
    }

    /// The server's resident memory: from `/proc` with a PID, else from the metrics' standard gauge.
    private func resident(metrics values: [String: Double]?) -> Int? {
        if let pid { return ProcessStats.memory(pid: pid)?.resident }
        return values?[Self.residentGauge].map { Int($0) }
    }

    private func fetch(_ metrics: BlockingHTTP) throws -> [String: Double] {
        let response = try metrics.request(method: "GET")
        guard response.status == 200 else {
            throw BlockingHTTP.Failure(description: "metrics answered status \(response.status)")
        }
        return PrometheusText.parse(String(decoding: response.body, as: UTF8.self))
    }
}
