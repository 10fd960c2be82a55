/// Turns a run's merged counts, intervals and server figures into the report, and judges it: any loss, rejected
/// or missing acknowledgement, reordering, failed or dropped connection, or stale stalled subscriber fails it.
struct ReportBuilder {
    let configuration: BenchConfiguration
    let plan: RunPlan
    let result: WorkerResult
    let aggregate: IntervalAggregate
    let server: BenchReport.ServerFigures
    let connect: BenchReport.ConnectionFigures
    /// When the workload started and when the reporter saw it end (`monotonicNanoseconds()`).
    let start: UInt64
    let end: UInt64
    let clientCPU: Double
    let ranWorkload: Bool
    /// The one-minute load average as the run started.
    let loadAverageStart: Double?
    /// How the connections opened.
    let connectTimeline: [BenchReport.ConnectPoint]

    func report(date: String) -> BenchReport {
        let updates = plan.writers > 0
        let expected = updates ? plan.expectedDeliveries : result.received
        let lastDelivery = result.lastDelivery > start ? result.lastDelivery : end
        let elapsed = updates ? secondsBetween(start, max(lastDelivery, result.lastAck)) : secondsBetween(start, end)
        let deliverySeconds = updates ? secondsBetween(start, lastDelivery) : elapsed
        let ackSeconds = secondsBetween(start, result.lastAck)
        var connections = connect
        connections.closedByServer = result.closedByServer
        let machine = ProcessStats.machine()
        var report = BenchReport(
            scenario: plan.scenario, wireProtocol: plan.wireProtocol, url: configuration.url, command: nil,
            date: date,
            machine: BenchReport.Machine(
                cores: machine.cores, memoryBytes: machine.memoryBytes, loadAverageStart: loadAverageStart,
                loadAverageEnd: ProcessStats.loadAverage()),
            workload: workload, connections: connections, elapsedSeconds: elapsed, expectedDeliveries: expected,
            deliveries: result.received, lost: expected - result.received, writesSent: result.sent,
            writesAcknowledged: result.acks, writesRejected: result.rejectedWrites, outOfOrder: result.outOfOrder,
            unexpectedPushes: result.unexpectedPushes, evictions: result.evictions,
            deliveriesPerSecond: deliverySeconds > 0 ? Double(result.received) / deliverySeconds : 0,
            writeAcksPerSecond: ackSeconds > 0 ? Double(result.acks) / ackSeconds : 0,
            latency: aggregate.latency.summary, writeLatency: aggregate.writeLatency.summary,
            clientCPUSeconds: clientCPU,
            clientCPUNanosecondsPerDelivery: result.received > 0 ? clientCPU * 1e9 / Double(result.received) : nil,
            clientCores: elapsed > 0 ? clientCPU / elapsed : 0, server: server, stall: stallFigures,
            connectTimeline: connectTimeline, timeline: aggregate.timeline(elapsed: elapsed),
            distribution: aggregate.distribution,
            errors: result.errors, failures: [])
        report.failures = failures(report)
        return report
    }

    private var workload: BenchReport.Workload {
        BenchReport.Workload(
            writers: plan.writers, subscribersPerRoom: plan.subscribersPerRoom, rooms: plan.rooms,
            writes: plan.totalWrites, payloadBytes: configuration.payload,
            window: plan.writers > 0 && configuration.rate == nil ? configuration.window : nil,
            rate: plan.writers > 0 ? configuration.rate : nil,
            limit: plan.scenario == .query ? configuration.limit : nil, processes: configuration.processes ?? 1,
            threads: configuration.threads, sourceAddresses: configuration.sourceAddresses ?? 1,
            deflate: configuration.deflate, tls: configuration.url.hasPrefix("wss://"))
    }

    private var stallFigures: BenchReport.StallFigures? {
        guard plan.stalledIndex != nil, let stall = result.stall else { return nil }
        let reference = result.referenceValue
        let final = plan.finalValueOfRoomZero
        let disconnected = stall.disconnectReason != nil
        let matchesReference = reference != nil && stall.lastValue?.writer == reference?.writer
            && stall.lastValue?.sequence == reference?.sequence
        let matchesFinal = final.map {
            stall.lastValue?.writer == $0.writer && stall.lastValue?.sequence == $0.sequence
        }
        return BenchReport.StallFigures(
            seconds: configuration.stallSeconds, deliveries: stall.deliveries, disconnected: disconnected,
            disconnectReason: stall.disconnectReason,
            latestState: !disconnected && matchesReference && matchesFinal != false,
            catchUpSeconds: stall.resumedAt > 0 && stall.caughtUpAt >= stall.resumedAt
                ? secondsBetween(stall.resumedAt, stall.caughtUpAt) : nil)
    }

    private func failures(_ report: BenchReport) -> [String] {
        var failures: [String] = []
        if report.connections.failed > 0 {
            let first = result.errors.first.map { ": \($0)" } ?? ""
            failures.append("\(report.connections.failed) of \(report.connections.planned) connections failed\(first)")
        }
        if !ranWorkload { failures.append("the workload did not run because connections failed") }
        if report.connections.closedByServer > 0 {
            failures.append("the server closed \(report.connections.closedByServer) connections")
        }
        guard ranWorkload else { return failures }
        if plan.writers > 0 {
            if report.lost > 0 {
                failures.append("\(report.lost) deliveries lost (expected \(report.expectedDeliveries))")
            } else if report.lost < 0 {
                failures.append("\(-report.lost) deliveries more than expected (\(report.expectedDeliveries))")
            }
            if report.writesAcknowledged != plan.totalWrites || report.writesRejected > 0 {
                failures.append(
                    "\(report.writesAcknowledged) of \(plan.totalWrites) writes acknowledged, "
                        + "\(report.writesRejected) rejected")
            }
            if report.outOfOrder > 0 { failures.append("\(report.outOfOrder) updates out of order") }
        }
        if plan.scenario == .echo, report.deliveries == 0 { failures.append("no echo came back") }
        if let stall = report.stall, !stall.latestState {
            let what = stall.disconnected ? "was disconnected" : "missed the latest state"
            failures.append("the stalled subscriber \(what)")
        }
        if plan.stalledIndex != nil, report.stall == nil { failures.append("the stalled subscriber reported nothing") }
        return failures
    }
}
