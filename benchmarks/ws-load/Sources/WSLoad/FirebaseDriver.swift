import Synchronization

/// What the main thread observed around a Firebase workload: CPU, the server's memory and metrics.
struct FirebaseObservation {
    var serverCPU: Double?
    var clientCPU = 0.0
    /// The server's `VmRSS` when the workload started (all clients connected and listening) and at its end, the
    /// largest sampled in between (every 100 ms), and `VmHWM` at the end; bytes.
    var residentAtStart: Int?
    var residentAtEnd: Int?
    var residentMaximum: Int?
    var residentPeak: Int?
    /// The server's metrics before and after the workload, summed per name.
    var metricsBefore: [String: Double]?
    var metricsAfter: [String: Double]?
    var metricsError: String?
}

/// Runs a Firebase workload from the main thread once every connection is ready: reads the metrics, starts the
/// workers, samples the server's memory and prints progress until every worker finished, and reads the metrics
/// again. The caller stops the workers.
func observeFirebaseWorkload(options: LoadOptions, coordinator: Coordinator) -> FirebaseObservation {
    var observation = FirebaseObservation()
    var scrape: MetricsScrape?
    do {
        scrape = try options.firebase.metricsURL.map { try MetricsScrape(url: $0) }
        observation.metricsBefore = try scrape?.fetch()
    } catch {
        observation.metricsError = "\(error)"
        scrape = nil
    }
    let pid = options.serverPID
    observation.residentAtStart = pid.flatMap { processMemory(pid: $0)?.resident }
    observation.residentMaximum = observation.residentAtStart
    let serverCPUAtStart = pid.flatMap { processCPUSeconds(pid: $0) }
    let clientCPUAtStart = ownCPUSeconds()
    let start = coordinator.start()
    var nextSample = start
    var nextProgress = start + 5_000_000_000
    var deliveredAtProgress = 0
    while coordinator.finishedWorkers.load(ordering: .relaxed) < options.threads {
        sleepSeconds(0.002)
        let now = monotonicNanoseconds()
        if let pid, now >= nextSample {
            if let resident = processMemory(pid: pid)?.resident {
                observation.residentMaximum = max(observation.residentMaximum ?? 0, resident)
            }
            nextSample = now + 100_000_000
        }
        if now >= nextProgress {
            let delivered = coordinator.delivered.load(ordering: .relaxed)
            let acknowledged = coordinator.acknowledged.load(ordering: .relaxed)
            let rate = Double(delivered - deliveredAtProgress) / 5
            say("progress \(format(secondsBetween(start, now))) s: \(delivered) deliveries "
                + "(\(format(rate / 1e6)) M/s over the last 5 s), "
                + "\(acknowledged) of \(options.messages) puts acknowledged")
            deliveredAtProgress = delivered
            nextProgress += 5_000_000_000
        }
    }
    if let pid, let start = serverCPUAtStart, let end = processCPUSeconds(pid: pid) {
        observation.serverCPU = end - start
    }
    observation.clientCPU = ownCPUSeconds() - clientCPUAtStart
    if let pid, let memory = processMemory(pid: pid) {
        observation.residentAtEnd = memory.resident
        observation.residentPeak = memory.peak
        observation.residentMaximum = max(observation.residentMaximum ?? 0, memory.resident)
    }
    if let scrape {
        do {
            observation.metricsAfter = try scrape.fetch()
        } catch {
            observation.metricsError = "\(error)"
        }
    }
    return observation
}
