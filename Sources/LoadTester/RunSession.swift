/// The reporting side of one run: connect, start, watch, stop, on the calling thread.
struct RunSession {
    /// Seconds the runner waits beyond `--timeout` for workers that should have given up by themselves.
    static let graceSeconds = 10.0
    /// How often the reporter looks at the workers, in seconds.
    static let tick = 0.02
    /// Nanoseconds between the points of the connect timeline.
    static let connectSampleInterval: UInt64 = 100_000_000

    let configuration: BenchConfiguration
    let plan: RunPlan
    let fleet: any Fleet
    let progress: ProgressLine
    var observer: ServerObserver
    var aggregate = IntervalAggregate()

    init(
        configuration: BenchConfiguration, plan: RunPlan, fleet: any Fleet, progress: ProgressLine,
        observer: ServerObserver
    ) {
        self.configuration = configuration
        self.plan = plan
        self.fleet = fleet
        self.progress = progress
        self.observer = observer
    }

    /// Runs every phase and builds the report.
    mutating func run(date: String) throws -> BenchReport {
        let loadAverage = ProcessStats.loadAverage()
        observer.beforeConnecting()
        let connectStart = monotonicNanoseconds()
        try fleet.startConnecting()
        let connectDeadline = connectStart + UInt64((configuration.timeout + Self.graceSeconds) * 1e9)
        var connectTimeline: [BenchReport.ConnectPoint] = []
        var nextPoint = connectStart
        while true {
            fleet.pump()
            let now = monotonicNanoseconds()
            let state = fleet.connectProgress
            if now >= nextPoint || state.settled {
                connectTimeline.append(
                    BenchReport.ConnectPoint(
                        seconds: secondsBetween(connectStart, now), opened: state.opened, failed: state.failed,
                        serverResidentBytes: observer.residentNow))
                nextPoint = now + Self.connectSampleInterval
            }
            if state.settled || now > connectDeadline { break }
            progress.update(now: now) {
                let seconds = secondsBetween(connectStart, now)
                return "connecting \(format((seconds * 10).rounded() / 10)) s: \(Human.count(state.opened)) of "
                    + "\(Human.count(plan.connections)) ready, \(Human.count(state.failed)) failed, "
                    + Human.rate(seconds > 0 ? Double(state.opened) / seconds : 0)
            }
            sleepSeconds(Self.tick)
        }
        let connected = monotonicNanoseconds()
        let connecting = fleet.connectProgress
        progress.finish()
        if connecting.opened == 0 {
            let stopped = try fleet.stop()
            throw BenchRunError.noConnections(
                planned: plan.connections, firstError: stopped.result.errors.first ?? "no connection became ready")
        }
        let connect = BenchReport.ConnectionFigures(
            planned: plan.connections, opened: connecting.opened, failed: plan.connections - connecting.opened,
            closedByServer: 0, connectSeconds: secondsBetween(connectStart, connected),
            acceptsPerSecond: Double(connecting.opened) / max(1e-9, secondsBetween(connectStart, connected)))
        let runsWorkload = connecting.opened == plan.connections || plan.scenario == .connections
        observer.workloadStarts()
        let cpuAtStart = fleet.clientCPUSeconds()
        let start = monotonicNanoseconds()
        var end = start
        if runsWorkload {
            fleet.startWorkload(at: start)
            end = watch(start: start)
        }
        let clientCPU = fleet.clientCPUSeconds() - cpuAtStart
        observer.workloadEnds()
        let stopped = try fleet.stop()
        aggregate.add(stopped.intervals)
        progress.finish()
        return ReportBuilder(
            configuration: configuration, plan: plan, result: stopped.result, aggregate: aggregate,
            server: observer.figures(deliveries: stopped.result.received, opened: connecting.opened),
            connect: connect, start: start, end: end, clientCPU: clientCPU,
            ranWorkload: runsWorkload, loadAverageStart: loadAverage, connectTimeline: connectTimeline
        ).report(date: date)
    }

    /// Watches the workload until it is over (every update in and acknowledged, the echo duration, the hold);
    /// returns when it ended.
    private mutating func watch(start: UInt64) -> UInt64 {
        let fixedLength: Double?
        switch plan.scenario {
        case .echo: fixedLength = configuration.duration ?? 10
        case .connections: fixedLength = configuration.duration ?? 2
        case .fanout, .rooms, .query, .writes: fixedLength = nil
        }
        let deadline = start + UInt64((fixedLength ?? configuration.timeout + Self.graceSeconds) * 1e9)
        var lastDelivered = 0
        var lastTime = start
        var rate = 0.0
        while true {
            fleet.pump()
            aggregate.add(fleet.takeIntervals())
            let now = monotonicNanoseconds()
            observer.sample(now: now)
            let live = fleet.live
            if fixedLength == nil, live.finished { return now }
            if now >= deadline { return now }
            if now - lastTime >= 1_000_000_000 {
                rate = Double(live.delivered - lastDelivered) / secondsBetween(lastTime, now)
                lastDelivered = live.delivered
                lastTime = now
            }
            // Within the first second the rate so far stands in for the last second's.
            let shown = lastTime == start ? Double(live.delivered) / max(1e-3, secondsBetween(start, now)) : rate
            progress.update(now: now) { progressText(live: live, rate: shown, seconds: secondsBetween(start, now)) }
            sleepSeconds(Self.tick)
        }
    }

    private func progressText(live: LiveCounts, rate: Double, seconds: Double) -> String {
        let latency = aggregate.latency
        var text = "\(format((seconds * 10).rounded() / 10)) s: \(Human.count(fleet.connectProgress.opened)) conns"
        if plan.writers > 0 {
            text += ", sent \(Human.count(live.sent)), acked \(Human.count(live.acks))"
        }
        let unit = plan.scenario == .echo ? "round trips" : "delivered"
        text += ", \(unit) \(Human.count(live.delivered)) (\(Human.rate(rate)))"
        if latency.count > 0 {
            text += ", p50 \(Human.latency(microseconds(latency.nanoseconds(atPercentile: 50))))"
                + " p99 \(Human.latency(microseconds(latency.nanoseconds(atPercentile: 99))))"
        }
        return text
    }
}
