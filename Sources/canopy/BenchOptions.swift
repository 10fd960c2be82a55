import ArgumentParser
import LoadTester

/// Options every `canopy bench` scenario takes; nil leaves the scenario's default.
struct BenchOptions: ParsableArguments {
    @Option(help: "Server: ws://HOST:PORT[/PATH] or wss://… (Firebase adds /.ws?v=5&ns=NS without a path); redis:// or nats:// for those protocols. Several comma-separated (a cluster's nodes): connection i goes to node i mod N.")
    var url: String?
    @Option(name: .customLong("protocol"), help: "firebase, mqtt (QoS 0), raw (a broadcast/echo endpoint), redis or nats (pub/sub on plain TCP).")
    var wireProtocol: BenchProtocol?
    @Option(name: .customLong("ns"), help: "Firebase namespace (default bench).")
    var namespace: String?
    @Option(name: .customLong("auth"), help: "Credential sent with auth/gauth after the hello (e.g. owner).")
    var authToken: String?
    @Option(help: "wss: PEM file of the certificate authorities to trust.")
    var caFile: String?
    @Flag(help: "wss: accept any server certificate (self-signed benchmark servers only).")
    var insecure = false
    @Flag(help: "Offer permessage-deflate and inflate what the server compresses.")
    var deflate = false

    @Option(help: "Writers.")
    var writers: Int?
    @Option(help: "Writes in total over all writers.")
    var messages: Int?
    @Option(help: "Writes per second over all writers (default: as fast as --window allows).")
    var rate: Double?
    @Option(help: "Seconds: with --rate, --messages = rate × duration; echo measures, connections hold this long.")
    var duration: Double?
    @Option(help: "Unacknowledged writes each writer may have.")
    var window: Int?
    @Option(help: "Bytes of each written JSON object (default 64).")
    var payload: Int?

    @Option(help: "Connections started per second (default: as fast as --connect-window allows).")
    var rampUp: Double?
    @Option(help: "Connections between connect and ready at once (default 256).")
    var connectWindow: Int?
    @Option(help: "Epoll threads per process (default 1).")
    var threads: Int?
    @Option(help: "Client processes (default: as many as the open-file limit requires).")
    var processes: Int?
    @Option(help: "Loopback source addresses to spread connections over (default: one per 25,000 beyond 28,000).")
    var sourceAddresses: Int?
    @Option(help: "Seconds the whole run may take (default 120).")
    var timeout: Double?
    @Option(help: "Seconds without progress after which the missing updates count as lost (default 10).")
    var stallLimit: Double?

    @Option(name: .customLong("server-pid"), help: "The server's process id: report its CPU time and memory.")
    var serverPID: Int?
    @Option(
        name: .customLong("metrics-url"),
        help: "The server's Prometheus endpoint, e.g. http://127.0.0.1:9000/.metrics.")
    var metricsURL: String?

    @Option(help: "Write the report as JSON to this file.")
    var json: String?
    @Option(help: "Write throughput and latency plots to this SVG file.")
    var plot: String?
    @Flag(help: "No progress line and no report on the terminal (the files and the exit status remain).")
    var quiet = false

    /// Applies the options given to `configuration`.
    func apply(to configuration: inout BenchConfiguration) {
        if let url { configuration.url = url }
        if let wireProtocol { configuration.wireProtocol = wireProtocol }
        if let namespace { configuration.namespace = namespace }
        if let authToken { configuration.authToken = authToken }
        if let caFile { configuration.caFile = caFile }
        if insecure { configuration.verifyPeer = false }
        if deflate { configuration.deflate = true }
        if let writers { configuration.writers = writers }
        if let messages { configuration.messages = messages }
        if let rate { configuration.rate = rate }
        if let duration { configuration.duration = duration }
        if let window { configuration.window = window }
        if let payload { configuration.payload = payload }
        if let rampUp { configuration.rampUp = rampUp }
        if let connectWindow { configuration.connectWindow = connectWindow }
        if let threads { configuration.threads = threads }
        if let processes { configuration.processes = processes }
        if let sourceAddresses { configuration.sourceAddresses = sourceAddresses }
        if let timeout { configuration.timeout = timeout }
        if let stallLimit { configuration.stallLimit = stallLimit }
        if let serverPID { configuration.serverPID = serverPID }
        if let metricsURL { configuration.metricsURL = metricsURL }
    }
}

/// The stalled-subscriber options of fanout and rooms.
struct StallOptions: ParsableArguments {
    @Option(help: "Seconds one extra subscriber of room 0 stops reading (it must stay connected and catch up).")
    var stallSeconds: Double?
    @Option(help: "Seconds into the workload at which it stops reading (default 1).")
    var stallAfter: Double?

    func apply(to configuration: inout BenchConfiguration) {
        if let stallSeconds { configuration.stallSeconds = stallSeconds }
        if let stallAfter { configuration.stallAfter = stallAfter }
    }
}

extension BenchProtocol: ExpressibleByArgument {}
