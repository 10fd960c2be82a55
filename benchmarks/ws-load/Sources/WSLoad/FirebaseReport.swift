/// Turns a Firebase run's worker results and observation into human lines and JSON fields, and judges it.
struct FirebaseReport {
    /// The counters whose deltas prove that an update is encoded once, not once per subscriber.
    static let encodedCounter = "canopy_push_frames_encoded_total"
    static let deliveredCounter = "canopy_push_frames_delivered_total"

    let options: LoadOptions
    let plan: FirebasePlan
    let results: [WorkerResult]
    let start: UInt64
    let observation: FirebaseObservation

    /// Prints the report, adds its fields to `summary`, and returns whether the run passed: nothing lost or
    /// duplicated, every put acknowledged with `ok`, every single-writer room in order, and the stalled subscriber
    /// (if any) still connected and holding room 0's last value.
    func add(to summary: inout JSONLine) -> Bool {
        var ok = true
        let received = results.reduce(0) { $0 + $1.received }
        let expected = plan.expectedDeliveries
        let sent = results.reduce(0) { $0 + $1.sent }
        let acks = results.reduce(0) { $0 + $1.acks }
        let rejected = results.reduce(0) { $0 + $1.rejectedPuts }
        let outOfOrder = results.reduce(0) { $0 + $1.outOfOrder }
        let unexpected = results.reduce(0) { $0 + $1.unexpectedPushes }
        let lastDelivery = results.map(\.lastDelivery).max() ?? start
        let lastAck = results.map(\.lastAck).max() ?? start
        let deliverySeconds = secondsBetween(start, lastDelivery)
        let ackSeconds = secondsBetween(start, lastAck)
        let deliveryRate = deliverySeconds > 0 ? Double(received) / deliverySeconds : 0
        let ackRate = ackSeconds > 0 ? Double(acks) / ackSeconds : 0
        let lost = expected - received
        let pacing = options.firebase.rate.map { "rate \(format($0)) puts/s" } ?? "window \(options.window)"
        say("\(options.mode.rawValue): \(plan.rooms) room(s) × \(plan.subscribersPerRoom) subscribers, "
            + "\(plan.writers) writer(s), \(options.messages) puts of \(options.payload)-byte objects, \(pacing)")
        say("deliveries: \(received) of \(expected) in \(format(deliverySeconds)) s = "
            + "\(format(deliveryRate / 1e6)) M/s, lost \(lost)")
        say("acks: \(acks) ok, \(rejected) rejected, of \(sent) puts sent, in \(format(ackSeconds)) s = "
            + "\(format(ackRate)) acks/s")
        for (key, value) in [
            ("rooms", plan.rooms), ("subscribers_per_room", plan.subscribersPerRoom), ("writers", plan.writers),
            ("messages", options.messages), ("sent", sent), ("acks", acks), ("rejected_puts", rejected),
            ("expected", expected), ("received", received), ("lost", lost), ("out_of_order", outOfOrder),
            ("unexpected_pushes", unexpected),
        ] {
            summary.add(key, value)
        }
        if let rate = options.firebase.rate { summary.add("rate", rate) } else { summary.add("window", options.window) }
        summary.add("elapsed_s", deliverySeconds)
        summary.add("deliveries_per_s", deliveryRate)
        summary.add("acks_per_s", ackRate)
        if lost != 0 {
            ok = false
            complain("ws-load: \(lost < 0 ? "\(-lost) extra" : "\(lost) lost") deliveries (expected \(expected))")
        }
        if rejected != 0 || acks != options.messages {
            ok = false
            complain("ws-load: \(acks) of \(options.messages) puts acknowledged with ok, \(rejected) rejected")
        }
        if outOfOrder != 0 {
            ok = false
            complain("ws-load: \(outOfOrder) updates out of order in rooms with one writer")
        }
        if unexpected != 0 { complain("ws-load: warning: \(unexpected) pushes were not benchmark updates") }
        addLatency(to: &summary)
        if options.firebase.timeline, var timeline = results.first?.timeline {
            for result in results.dropFirst() { timeline.merge(result.timeline) }
            say("timeline (counted subscribers):")
            for line in timeline.lines { say(line) }
        }
        addServer(to: &summary, deliveries: received)
        if plan.stalledIndex != nil, !addStall(to: &summary) { ok = false }
        return ok
    }

    private func addLatency(to summary: inout JSONLine) {
        var histogram = LatencyHistogram()
        for result in results {
            if let latencies = result.histogram { histogram.merge(latencies) }
        }
        let percentiles: [(String, Double)] = [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999)]
        var parts: [String] = []
        for (name, fraction) in percentiles {
            let value = histogram.percentile(fraction) ?? 0
            summary.add("\(name)_us", value)
            parts.append("\(name == "p999" ? "p99.9" : name) \(value) µs")
        }
        let maximum = Int(histogram.maximumNanoseconds / 1000)
        summary.add("max_us", maximum)
        say("write-to-delivery latency: " + parts.joined(separator: ", ") + ", max \(maximum) µs")
    }

    private func addServer(to summary: inout JSONLine, deliveries: Int) {
        var parts: [String] = []
        if let serverCPU = observation.serverCPU {
            summary.add("server_cpu_s", serverCPU)
            if deliveries > 0 { summary.add("server_cpu_ns_per_delivery", serverCPU * 1e9 / Double(deliveries)) }
            parts.append("server \(format(serverCPU)) s")
        }
        summary.add("client_cpu_s", observation.clientCPU)
        if deliveries > 0 {
            summary.add("client_cpu_ns_per_delivery", observation.clientCPU * 1e9 / Double(deliveries))
        }
        parts.append("client \(format(observation.clientCPU)) s")
        if deliveries > 0 {
            let perDelivery = parts.count == 2
                ? " (server \(Int(((observation.serverCPU ?? 0) * 1e9 / Double(deliveries)).rounded())) ns, client "
                    + "\(Int((observation.clientCPU * 1e9 / Double(deliveries)).rounded())) ns per delivery)"
                : " (client \(Int((observation.clientCPU * 1e9 / Double(deliveries)).rounded())) ns per delivery)"
            say("CPU: " + parts.joined(separator: ", ") + perDelivery)
        }
        let memory: [(String, Int?)] = [
            ("server_rss_start_bytes", observation.residentAtStart),
            ("server_rss_end_bytes", observation.residentAtEnd),
            ("server_rss_max_bytes", observation.residentMaximum),
            ("server_rss_peak_bytes", observation.residentPeak),
        ]
        for case let (key, value?) in memory { summary.add(key, value) }
        if let start = observation.residentAtStart, let end = observation.residentAtEnd,
            let maximum = observation.residentMaximum
        {
            say("server RSS: \(mebibytes(start)) at start, \(mebibytes(end)) at end, "
                + "\(mebibytes(maximum)) max sampled, "
                + "\(mebibytes(observation.residentPeak ?? maximum)) peak (VmHWM)")
        }
        if let error = observation.metricsError { complain("ws-load: metrics: \(error)") }
        guard let before = observation.metricsBefore, let after = observation.metricsAfter else { return }
        let encoded = (after[Self.encodedCounter] ?? 0) - (before[Self.encodedCounter] ?? 0)
        let delivered = (after[Self.deliveredCounter] ?? 0) - (before[Self.deliveredCounter] ?? 0)
        summary.add("frames_encoded", Int(encoded))
        summary.add("frames_delivered", Int(delivered))
        say("server push frames: \(Int(encoded)) encoded, \(Int(delivered)) delivered"
            + (encoded > 0 ? " (\(format(delivered / encoded)) deliveries per encoding" : "")
            + (encoded > 0 ? ", \(format(encoded / Double(options.messages))) encodings per put)" : ""))
        if after[Self.encodedCounter] == nil || after[Self.deliveredCounter] == nil {
            complain("ws-load: warning: the server's metrics lack \(Self.encodedCounter) or \(Self.deliveredCounter)")
        }
        let changed = after.keys.sorted().filter { name in
            name.hasSuffix("_total") && (after[name] ?? 0) != (before[name] ?? 0)
        }
        for name in changed {
            let delta = (after[name] ?? 0) - (before[name] ?? 0)
            say("  metric \(name) +\(format(delta))")
            summary.add("metric_\(name)", delta)
        }
    }

    /// Reports the stalled subscriber; returns whether it passed.
    private func addStall(to summary: inout JSONLine) -> Bool {
        guard let stall = results.compactMap(\.stall).first else { return false }
        let reference = results.compactMap(\.referenceValue).first
        let final = plan.finalValueOfRoomZero
        let disconnected = stall.disconnectReason != nil
        let matchesReference = reference != nil && stall.lastValue?.writer == reference?.writer
            && stall.lastValue?.sequence == reference?.sequence
        let matchesFinal = final.map {
            stall.lastValue?.writer == $0.writer && stall.lastValue?.sequence == $0.sequence
        }
        let latest = !disconnected && matchesReference && matchesFinal != false
        summary.add("stall_seconds", options.firebase.stallSeconds)
        summary.add("stall_deliveries", stall.deliveries)
        summary.add("stall_disconnected", disconnected)
        summary.add("stall_latest_state", latest)
        if stall.resumedAt > 0, stall.caughtUpAt >= stall.resumedAt {
            summary.add("stall_catch_up_s", secondsBetween(stall.resumedAt, stall.caughtUpAt))
        }
        let held = stall.lastValue.map { "writer \($0.writer) seq \($0.sequence)" } ?? "nothing"
        let wanted = reference.map { "writer \($0.writer) seq \($0.sequence)" } ?? "nothing"
        var line = "stalled subscriber: paused \(format(secondsBetween(start, stall.pausedAt))) s into the run for "
            + "\(format(options.firebase.stallSeconds)) s; received \(stall.deliveries) of \(plan.messagesPerRoom[0]) "
            + "updates; "
        if let reason = stall.disconnectReason {
            line += "DISCONNECTED \(format(secondsBetween(start, stall.disconnectedAt))) s into the run (\(reason))"
        } else {
            line += "stayed connected; holds \(held), the room's last value is \(wanted)"
            if stall.resumedAt > 0, stall.caughtUpAt >= stall.resumedAt {
                let lastPut = results.map(\.lastAck).max() ?? 0
                line += "; resumed at \(format(secondsBetween(start, stall.resumedAt))) s, held the last value at "
                    + "\(format(secondsBetween(start, stall.caughtUpAt))) s (last put acknowledged at "
                    + "\(format(secondsBetween(start, lastPut))) s)"
            }
        }
        say(line)
        if !latest {
            complain("ws-load: the stalled subscriber \(disconnected ? "was disconnected" : "missed the latest state")")
        }
        return latest
    }

    private func mebibytes(_ bytes: Int) -> String {
        "\(format(Double(bytes) / 1_048_576)) MiB"
    }
}
