import Glibc

/// Runs one `canopy bench` scenario: opens the connections (in this process, or in worker processes when the
/// open-file limit requires), drives the workload with a live progress line, watches the server, and returns the
/// report.
///
/// The calling thread reports; the connections live on the workers' own threads (one epoll loop each).
public struct BenchRunner {
    /// Connections one loopback source address can carry to one server port (the ephemeral port range holds about
    /// 28,000), and how many go to each address once they are spread.
    static let connectionsPerSourceAddress = (spreadAbove: 28_000, each: 25_000)
    /// Descriptors a client process keeps for itself besides its connections.
    static let reservedDescriptors = 64

    /// What to run.
    public var configuration: BenchConfiguration
    /// The command that starts a worker process (`canopy bench worker`); without it a run that exceeds one
    /// process's open-file limit fails.
    public var workerCommand: [String]?
    /// Print the progress line (standard error) and the human report (standard output).
    public var prints: Bool

    /// A runner for `configuration`.
    public init(configuration: BenchConfiguration, workerCommand: [String]? = nil, prints: Bool = true) {
        self.configuration = configuration
        self.workerCommand = workerCommand
        self.prints = prints
    }

    /// Runs the scenario and returns its report; throws when the run could not be carried out (a bad
    /// configuration, no connection at all, a broken worker process).
    public func run() throws -> BenchReport {
        try configuration.validate()
        signal(SIGPIPE, SIG_IGN)
        var configuration = self.configuration
        let plan = RunPlan(configuration)
        let openFiles = ProcessStats.raiseOpenFileLimit()
        configuration.processes = try processes(for: plan.connections, openFiles: openFiles)
        configuration.sourceAddresses = configuration.sourceAddresses
            ?? (plan.connections > Self.connectionsPerSourceAddress.spreadAbove
                ? (plan.connections + Self.connectionsPerSourceAddress.each - 1) / Self.connectionsPerSourceAddress.each
                : 1)
        let server = try configuration.serverURL
        let tlsContext = try LocalFleet.tlsContext(for: configuration, server: server)
        if configuration.scenario == .query, configuration.prefill > 0 {
            try QueryPrefill(configuration: configuration, server: server, tlsContext: tlsContext).run()
        }
        let clockOrigin = monotonicNanoseconds()
        let date = isoDate()
        let fleet: any Fleet
        if configuration.processes == 1 {
            fleet = try LocalFleet(configuration: configuration, slot: 0, slots: 1, clockOrigin: clockOrigin)
        } else {
            guard let workerCommand else {
                throw BenchRunError.system(
                    "\(plan.connections) connections need \(configuration.processes ?? 1) processes here"
                        + " (open-file limit \(openFiles)); run through `canopy bench`")
            }
            fleet = try ProcessFleet(configuration: configuration, command: workerCommand, clockOrigin: clockOrigin)
        }
        var session = RunSession(
            configuration: configuration, plan: plan, fleet: fleet, progress: ProgressLine(enabled: prints),
            observer: ServerObserver(configuration: configuration, tlsContext: tlsContext))
        if prints {
            say("canopy bench \(configuration.scenario.rawValue): \(plan.connections) connections to "
                + "\(configuration.url) (\(configuration.wireProtocol.rawValue)), "
                + "\(configuration.processes ?? 1) process(es) × \(configuration.threads) thread(s), "
                + "open-file limit \(openFiles)")
        }
        var report = try session.run(date: date)
        report.workload.processes = configuration.processes ?? 1
        report.workload.sourceAddresses = configuration.sourceAddresses ?? 1
        if prints { ReportText.print(report) }
        return report
    }

    /// Processes needed: `--processes`, or as many as keep each under this process's open-file limit.
    private func processes(for connections: Int, openFiles: Int) throws -> Int {
        let budget = max(1, openFiles - Self.reservedDescriptors)
        if let processes = configuration.processes {
            guard (connections + processes - 1) / processes <= budget else {
                throw BenchConfigurationError(
                    "\(connections) connections over \(processes) processes exceed the open-file limit \(openFiles)")
            }
            return processes
        }
        return max(1, (connections + budget - 1) / budget)
    }

    private func isoDate() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):"
            + "\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
