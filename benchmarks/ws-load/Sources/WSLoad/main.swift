import Glibc
import Synchronization

// ws-load: a dependency-free WebSocket load generator for Canopy's transport and Firebase fan-out benchmarks (see
// LoadOptions.usage).
// Human-readable lines go to stdout as the run progresses; the last line is one JSON object for scripts.

signal(SIGPIPE, SIG_IGN)

let options: LoadOptions
do {
    options = try LoadOptions(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    complain("ws-load: \(error)\n\(LoadOptions.usage)")
    exit(2)
}

let openFileLimit = raiseOpenFileLimit()
if openFileLimit >= 0, options.connections + 32 > openFileLimit {
    complain("ws-load: \(options.connections) connections need more descriptors than the limit \(openFileLimit)")
    exit(2)
}

let address: ServerAddress
do {
    address = try ServerAddress(host: options.host, port: options.port)
} catch {
    complain("ws-load: \(error)")
    exit(1)
}

let coordinator = Coordinator()
let workers = (0..<options.threads).map {
    Worker(index: $0, options: options, address: address, coordinator: coordinator)
}
say("ws-load \(options.mode.rawValue): \(options.connections) connections to \(options.host):\(options.port)"
    + "\(options.path), \(options.threads) thread(s), open-file limit \(openFileLimit)")

let connectStart = monotonicNanoseconds()
let threads = workers.map { worker in startThread { worker.run() } }
let connectDeadline = connectStart + UInt64(options.timeout * 1e9)
while coordinator.opened.load(ordering: .relaxed) + coordinator.failed.load(ordering: .relaxed) < options.connections {
    if monotonicNanoseconds() > connectDeadline {
        complain("ws-load: connections not ready after \(format(options.timeout)) s")
        break
    }
    sleepSeconds(0.001)
}
let connectSeconds = secondsBetween(connectStart, monotonicNanoseconds())
let failedConnects = options.connections - coordinator.opened.load(ordering: .relaxed)

var summary = JSONLine()
summary.add("mode", options.mode.rawValue)
summary.add("connections", options.connections)
summary.add("threads", options.threads)
summary.add("payload", options.payload)
summary.add("connect_s", connectSeconds)

var ok = failedConnects == 0
var echoSeconds = 0.0
var serverCPUAtStart: Double?
var clientCPUAtStart = 0.0
/// CPU seconds the server and this client spent on the workload (not on connecting).
var serverCPU: Double?
var clientCPU: Double?
/// Fanout and rooms: what the main thread saw of the workload.
var firebaseObservation: FirebaseObservation?

/// Reads both processes' CPU time at the end of the workload.
@MainActor
func measureCPU() {
    if let pid = options.serverPID, let start = serverCPUAtStart, let end = processCPUSeconds(pid: pid) {
        serverCPU = end - start
    }
    clientCPU = ownCPUSeconds() - clientCPUAtStart
}
if !ok {
    complain("ws-load: \(failedConnects) of \(options.connections) connections failed to open")
    coordinator.stop()
} else {
    say("connected \(options.connections) connections in \(format(connectSeconds)) s")
    serverCPUAtStart = options.serverPID.flatMap { processCPUSeconds(pid: $0) }
    clientCPUAtStart = ownCPUSeconds()
    switch options.mode {
    case .echo:
        let start = coordinator.start()
        sleepSeconds(options.duration)
        echoSeconds = secondsBetween(start, monotonicNanoseconds())
        coordinator.stop()
        measureCPU()
        summary.add("duration_s", echoSeconds)
    case .broadcast:
        _ = coordinator.start()
        while coordinator.finishedWorkers.load(ordering: .relaxed) < options.threads {
            sleepSeconds(0.001)
        }
        measureCPU()
        coordinator.stop()
    case .idle:
        _ = coordinator.start()
        say("all \(options.connections) connections open")
        sleepSeconds(options.hold)
        coordinator.stop()
        summary.add("hold_s", options.hold)
    case .fanout, .rooms:
        firebaseObservation = observeFirebaseWorkload(options: options, coordinator: coordinator)
        coordinator.stop()
    }
}
for thread in threads {
    pthread_join(thread, nil)
}

let results = workers.map(\.result)
let closedByServer = results.reduce(0) { $0 + $1.closedByServer }
summary.add("failed_connects", failedConnects)
summary.add("closed_by_server", closedByServer)
if closedByServer > 0 {
    ok = false
    complain("ws-load: the server closed \(closedByServer) connections")
}
for error in results.flatMap(\.errors).prefix(5) {
    complain("ws-load: \(error)")
}

if ok {
    switch options.mode {
    case .echo:
        let roundTrips = results.reduce(0) { $0 + $1.roundTrips }
        var histogram = LatencyHistogram()
        for result in results {
            if let latencies = result.histogram { histogram.merge(latencies) }
        }
        let duration = echoSeconds
        let rate = duration > 0 ? Double(roundTrips) / duration : 0
        let p50 = histogram.percentile(0.50) ?? 0
        let p99 = histogram.percentile(0.99) ?? 0
        say("echo: \(roundTrips) round trips in \(format(duration)) s = \(format(rate)) round trips/s, "
            + "p50 \(p50) µs, p99 \(p99) µs")
        summary.add("round_trips", roundTrips)
        summary.add("round_trips_per_s", rate)
        summary.add("p50_us", p50)
        summary.add("p99_us", p99)
        addCPU(units: roundTrips, name: "round_trip")
        if roundTrips == 0 { ok = false }
    case .broadcast:
        let received = results.reduce(0) { $0 + $1.received }
        let sent = results.reduce(0) { $0 + $1.sent }
        let expected = options.connections * options.messages
        let start = coordinator.startNanoseconds.load(ordering: .relaxed)
        let last = results.map(\.lastDelivery).max() ?? start
        let elapsed = secondsBetween(start, last)
        let rate = elapsed > 0 ? Double(received) / elapsed : 0
        let lost = expected - received
        say("broadcast: \(options.messages) messages from \(options.senders) sender(s), window \(options.window): "
            + "\(received) of \(expected) deliveries in \(format(elapsed)) s = \(format(rate / 1e6)) M deliveries/s, "
            + "lost \(lost)")
        summary.add("messages", options.messages)
        summary.add("senders", options.senders)
        summary.add("window", options.window)
        summary.add("sent", sent)
        summary.add("expected", expected)
        summary.add("received", received)
        summary.add("lost", lost)
        summary.add("elapsed_s", elapsed)
        summary.add("deliveries_per_s", rate)
        addCPU(units: received, name: "delivery")
        if lost != 0 {
            ok = false
            complain("ws-load: \(lost) deliveries lost (expected \(expected), received \(received))")
        }
    case .idle:
        say("idle: held \(options.connections) connections for \(format(options.hold)) s")
    case .fanout, .rooms:
        if let observation = firebaseObservation, let plan = workers.first?.plan {
            let report = FirebaseReport(
                options: options, plan: plan, results: results,
                start: coordinator.startNanoseconds.load(ordering: .relaxed), observation: observation)
            if !report.add(to: &summary) { ok = false }
        } else {
            ok = false
        }
    }
}
summary.add("ok", ok)

/// Adds CPU seconds and CPU nanoseconds per unit of work for the server (when known) and the client.
@MainActor
func addCPU(units: Int, name: String) {
    guard units > 0 else { return }
    var parts: [String] = []
    if let serverCPU {
        summary.add("server_cpu_s", serverCPU)
        summary.add("server_cpu_ns_per_\(name)", serverCPU * 1e9 / Double(units))
        parts.append("server \(format(serverCPU)) s = \(Int((serverCPU * 1e9 / Double(units)).rounded())) ns")
    }
    if let clientCPU {
        summary.add("client_cpu_s", clientCPU)
        summary.add("client_cpu_ns_per_\(name)", clientCPU * 1e9 / Double(units))
        parts.append("client \(format(clientCPU)) s = \(Int((clientCPU * 1e9 / Double(units)).rounded())) ns")
    }
    say("CPU per \(name == "round_trip" ? "round trip" : name): " + parts.joined(separator: ", "))
}
say(summary.text)
exit(ok ? 0 : 1)

/// Runs `body` on a new POSIX thread and returns the thread for `pthread_join`.
func startThread(_ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(&thread, nil, { argument in
        guard let argument else { return nil }
        Unmanaged<Box>.fromOpaque(argument).takeRetainedValue().body()
        return nil
    }, box)
    guard status == 0 else {
        complain("ws-load: pthread_create failed (\(status))")
        exit(1)
    }
    return thread
}
