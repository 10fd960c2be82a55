import ArgumentParser
import Foundation
import LoadTester

/// `canopy bench`: drives a running server over the real wire protocol and reports what it sustained.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Load-test a running server: subscription fan-out, rooms, queries, writes, idle connections.",
        discussion: """
            Every run prints a live progress line on standard error and a report on standard output, and exits \
            with status 1 when anything was lost, rejected or disconnected. See docs/benchmarks.md.
            """,
        subcommands: [
            BenchFanout.self, BenchRooms.self, BenchQuery.self, BenchWrites.self, BenchConnections.self,
            BenchEcho.self, BenchWorker.self,
        ])

    /// Runs `configuration` and writes the files `options` ask for; throws `ExitCode.failure` when the run failed.
    static func execute(_ configuration: BenchConfiguration, options: BenchOptions) throws {
        var workerCommand: [String]?
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            workerCommand = [executable, "bench", BenchWorker.configuration.commandName ?? "worker"]
        }
        let runner = BenchRunner(configuration: configuration, workerCommand: workerCommand, prints: !options.quiet)
        var report: BenchReport
        do {
            report = try runner.run()
        } catch let error as BenchConfigurationError {
            throw ValidationError(error.description)
        }
        report.command = CommandLine.arguments.map(Self.shellQuoted).joined(separator: " ")
        if let json = options.json {
            try report.json().write(to: URL(fileURLWithPath: json))
        }
        if let plot = options.plot {
            try Data(SVGPlot.render(report).utf8).write(to: URL(fileURLWithPath: plot))
        }
        if !report.ok { throw ExitCode.failure }
    }

    /// `argument` as a shell word, quoted when it needs to be.
    static func shellQuoted(_ argument: String) -> String {
        let plain = argument.unicodeScalars.allSatisfy {
            CharacterSet.alphanumerics.contains($0) || "-_./:=,@%+".unicodeScalars.contains($0)
        }
        guard !plain || argument.isEmpty else { return argument }
        return "'" + argument.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}

/// `canopy bench fanout`.
struct BenchFanout: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout", abstract: "N subscribers listen to one path; writers update it.")
    @OptionGroup var options: BenchOptions
    @OptionGroup var stall: StallOptions
    @Option(help: "Subscribers (default 1000).")
    var subscribers: Int?

    func run() throws {
        var configuration = BenchConfiguration(scenario: .fanout)
        options.apply(to: &configuration)
        stall.apply(to: &configuration)
        if let subscribers { configuration.subscribers = subscribers }
        try BenchCommand.execute(configuration, options: options)
    }
}

/// `canopy bench rooms`.
struct BenchRooms: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rooms", abstract: "R paths × N subscribers each; writers spread over the paths (chat).")
    @OptionGroup var options: BenchOptions
    @OptionGroup var stall: StallOptions
    @Option(help: "Rooms (default 100).")
    var rooms: Int?
    @Option(help: "Subscribers per room (default 100).")
    var subscribers: Int?

    func run() throws {
        var configuration = BenchConfiguration(scenario: .rooms)
        options.apply(to: &configuration)
        stall.apply(to: &configuration)
        if let rooms { configuration.rooms = rooms }
        if let subscribers { configuration.subscribers = subscribers }
        try BenchCommand.execute(configuration, options: options)
    }
}

/// `canopy bench query`.
struct BenchQuery: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Subscribers hold orderByChild(...).limitToLast(K) windows on a list writers append to.")
    @OptionGroup var options: BenchOptions
    @Option(help: "Subscribers (default 100).")
    var subscribers: Int?
    @Option(help: "The window size K (default 50).")
    var limit: Int?
    @Option(help: "Children written over REST before the subscribers listen (default 50).")
    var prefill: Int?
    @Option(help: "The child the list is ordered by: ts or seq (default ts).")
    var orderBy: String?

    func run() throws {
        var configuration = BenchConfiguration(scenario: .query)
        options.apply(to: &configuration)
        if let subscribers { configuration.subscribers = subscribers }
        if let limit { configuration.limit = limit }
        if let prefill { configuration.prefill = prefill }
        if let orderBy { configuration.orderBy = orderBy }
        try BenchCommand.execute(configuration, options: options)
    }
}

/// `canopy bench writes`.
struct BenchWrites: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "writes",
        abstract: "Many writers (each its own child), few listeners of the parent: acknowledged writes/s.")
    @OptionGroup var options: BenchOptions
    @Option(help: "Listeners of the parent path (default 2).")
    var listeners: Int?

    func run() throws {
        var configuration = BenchConfiguration(scenario: .writes)
        options.apply(to: &configuration)
        if let listeners { configuration.subscribers = listeners }
        try BenchCommand.execute(configuration, options: options)
    }
}

/// `canopy bench connections`.
struct BenchConnections: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connections",
        abstract: "Open C idle connections with one listen each as fast as the server accepts; report memory.")
    @OptionGroup var options: BenchOptions
    @Option(help: "Connections (default 10000).")
    var connections: Int?
    @Flag(help: "Every connection listens to the same path (default: each to its own).")
    var sharedPath = false

    func run() throws {
        var configuration = BenchConfiguration(scenario: .connections)
        options.apply(to: &configuration)
        if let connections { configuration.connections = connections }
        if sharedPath { configuration.sharedPath = true }
        try BenchCommand.execute(configuration, options: options)
    }
}

/// `canopy bench echo`.
struct BenchEcho: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "echo", abstract: "Raw WebSocket round trips against an echo endpoint (transport benchmark).")
    @OptionGroup var options: BenchOptions
    @Option(help: "Connections, each with one message in flight (default 100).")
    var connections: Int?

    func run() throws {
        var configuration = BenchConfiguration(scenario: .echo)
        options.apply(to: &configuration)
        if let connections { configuration.connections = connections }
        try BenchCommand.execute(configuration, options: options)
    }
}

/// `canopy bench worker`: one worker process of a run spread over several (started by `canopy bench` itself).
struct BenchWorker: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker", abstract: "Internal: a worker process of a larger run.", shouldDisplay: false)

    func run() throws {
        let status = BenchWorkerProcess.run()
        if status != 0 { throw ExitCode(status) }
    }
}
