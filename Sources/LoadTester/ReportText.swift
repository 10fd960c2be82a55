/// The report for people, on standard output.
public enum ReportText {
    /// Prints `report`.
    public static func print(_ report: BenchReport) {
        for line in lines(report) { say(line) }
    }

    /// The report's lines.
    public static func lines(_ report: BenchReport) -> [String] {
        var lines: [String] = [describe(report)]
        let connections = report.connections
        lines.append(
            "connections: \(Human.count(connections.opened)) of \(Human.count(connections.planned)) ready in "
                + "\(Human.rounded(connections.connectSeconds, places: 2)) s "
                + "(\(Human.rate(connections.acceptsPerSecond))), \(Human.count(connections.failed)) failed, "
                + "\(Human.count(connections.closedByServer)) closed by the server")
        let workload = report.workload
        if workload.writers > 0 {
            lines.append(
                "deliveries: \(Human.count(report.deliveries)) of \(Human.count(report.expectedDeliveries)) in "
                    + "\(Human.rounded(report.elapsedSeconds, places: 2)) s = "
                    + "\(Human.rate(report.deliveriesPerSecond)), lost \(Human.count(report.lost))"
                    + (report.evictions > 0 ? ", \(Human.count(report.evictions)) window evictions" : ""))
            lines.append(
                "writes: \(Human.count(report.writesSent)) sent, \(Human.count(report.writesAcknowledged)) "
                    + "acknowledged (\(Human.rate(report.writeAcksPerSecond))), "
                    + "\(Human.count(report.writesRejected)) rejected")
        } else if report.scenario == .echo {
            lines.append(
                "round trips: \(Human.count(report.deliveries)) in \(Human.rounded(report.elapsedSeconds, places: 2)) s"
                    + " = \(Human.rate(report.deliveriesPerSecond))")
        }
        if let latency = report.latency {
            let name = report.scenario == .echo ? "round-trip latency" : "write-to-delivery latency"
            lines.append("\(name): " + percentiles(latency))
        }
        if let latency = report.writeLatency {
            lines.append("write-to-acknowledgement latency: " + percentiles(latency))
        }
        var cpu = "client CPU: \(Human.rounded(report.clientCPUSeconds, places: 2)) s"
            + " (\(Human.rounded(report.clientCores, places: 2)) cores)"
        if let perDelivery = report.clientCPUNanosecondsPerDelivery {
            cpu += ", \(Int(perDelivery.rounded())) ns per delivery"
        }
        lines.append(cpu)
        if let start = report.machine.loadAverageStart, let end = report.machine.loadAverageEnd {
            lines.append(
                "machine: \(report.machine.cores) cores, load average \(Human.rounded(start, places: 2)) at the start, "
                    + "\(Human.rounded(end, places: 2)) at the end")
        }
        lines += serverLines(report.server)
        if let stall = report.stall {
            lines.append(
                "stalled subscriber (\(format(stall.seconds)) s without reading): received "
                    + "\(Human.count(stall.deliveries)) updates, "
                    + (stall.disconnected
                        ? "DISCONNECTED (\(stall.disconnectReason ?? "?"))"
                        : "stayed connected, \(stall.latestState ? "ended with" : "MISSED") the latest state")
                    + (stall.catchUpSeconds.map { ", caught up \(Human.rounded($0, places: 2)) s after resuming" }
                        ?? ""))
        }
        if report.unexpectedPushes > 0 {
            lines.append("warning: \(Human.count(report.unexpectedPushes)) pushes were not benchmark updates")
        }
        for error in report.errors { lines.append("error: \(error)") }
        lines.append(report.ok ? "OK" : "FAILED: " + report.failures.joined(separator: "; "))
        return lines
    }

    private static func describe(_ report: BenchReport) -> String {
        let workload = report.workload
        var text = "\(report.scenario.rawValue) (\(report.wireProtocol.rawValue)"
            + (workload.tls ? ", TLS" : "") + (workload.deflate ? ", permessage-deflate" : "") + ")"
        guard workload.writers > 0 else { return text }
        text += ": \(Human.count(workload.rooms)) room(s) × \(Human.count(workload.subscribersPerRoom)) subscribers, "
            + "\(Human.count(workload.writers)) writer(s), \(Human.count(workload.writes)) writes of "
            + "\(workload.payloadBytes) B"
        if let rate = workload.rate { text += " at \(Human.rate(rate))" }
        if let window = workload.window { text += ", window \(window)" }
        if let limit = workload.limit { text += ", limitToLast(\(limit))" }
        return text
    }

    private static func percentiles(_ latency: BenchReport.LatencySummary) -> String {
        "p50 \(Human.latency(latency.p50)), p90 \(Human.latency(latency.p90)), p99 \(Human.latency(latency.p99)), "
            + "p99.9 \(Human.latency(latency.p999)), max \(Human.latency(latency.max))"
    }

    private static func serverLines(_ server: BenchReport.ServerFigures) -> [String] {
        var lines: [String] = []
        if let cpu = server.cpuSeconds {
            lines.append(
                "server CPU: \(Human.rounded(cpu, places: 2)) s"
                    + (server.cpuNanosecondsPerDelivery.map { ", \(Int($0.rounded())) ns per delivery" } ?? "")
                    + (server.kernelCPUNanosecondsPerDelivery.map { " (\(Int($0.rounded())) ns in the kernel)" } ?? ""))
        }
        var memory: [String] = []
        let figures: [(String, Int?)] = [
            ("before", server.residentBeforeBytes), ("connected", server.residentConnectedBytes),
            ("end", server.residentEndBytes), ("max", server.residentMaxBytes), ("peak", server.residentPeakBytes),
        ]
        for case let (name, value?) in figures { memory.append("\(name) \(Human.bytes(Double(value)))") }
        if !memory.isEmpty {
            lines.append(
                "server RSS: " + memory.joined(separator: ", ")
                    + (server.residentPerConnectionBytes.map { "; \(Human.bytes($0)) per connection" } ?? ""))
        }
        if let encoded = server.framesEncoded, let delivered = server.framesDelivered {
            lines.append("server push frames: \(Human.count(encoded)) encoded, \(Human.count(delivered)) delivered")
        }
        for name in server.metricDeltas.keys.sorted() {
            lines.append("  metric \(name) +\(format(server.metricDeltas[name] ?? 0))")
        }
        if let error = server.metricsError { lines.append("metrics: \(error)") }
        return lines
    }
}
