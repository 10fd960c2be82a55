import Testing

@testable import LoadTester

@Suite("Report judging and plotting")
struct ReportTests {
    private func report(received: Int, acks: Int = 10, closed: Int = 0, outOfOrder: Int = 0) -> BenchReport {
        var configuration = BenchConfiguration(scenario: .fanout)
        configuration.subscribers = 3
        configuration.messages = 10
        let plan = RunPlan(configuration)
        var result = WorkerResult()
        result.opened = 4
        result.received = received
        result.sent = 10
        result.acks = acks
        result.closedByServer = closed
        result.outOfOrder = outOfOrder
        result.lastDelivery = 2_000_000_000
        result.lastAck = 2_000_000_000
        var aggregate = IntervalAggregate()
        var sample = IntervalSample(second: 0)
        sample.deliveries = received
        sample.acks = acks
        for _ in 0..<received { sample.latency.record(nanoseconds: 2_000_000) }
        var slow = IntervalSample(second: 2)
        slow.latency.record(nanoseconds: 50_000_000)
        aggregate.add([sample, slow])
        let connect = BenchReport.ConnectionFigures(
            planned: 4, opened: 4, failed: 0, closedByServer: 0, connectSeconds: 0.1, acceptsPerSecond: 40)
        return ReportBuilder(
            configuration: configuration, plan: plan, result: result, aggregate: aggregate,
            server: BenchReport.ServerFigures(metricDeltas: [:]), connect: connect, start: 1_000_000_000,
            end: 2_000_000_000, clientCPU: 0.5, ranWorkload: true, loadAverageStart: 1.5,
            connectTimeline: [
                BenchReport.ConnectPoint(seconds: 0, opened: 0, failed: 0, serverResidentBytes: 1 << 20),
                BenchReport.ConnectPoint(seconds: 0.1, opened: 4, failed: 0, serverResidentBytes: 2 << 20),
            ]
        ).report(date: "2026-01-01T00:00:00Z")
    }

    @Test("passes a run that delivered and acknowledged everything")
    func passesCompleteRun() {
        let report = report(received: 30)
        #expect(report.ok)
        #expect(report.lost == 0)
        #expect(report.deliveriesPerSecond == 30)
        #expect(report.timeline.map(\.second) == [0, 1, 2])
        #expect(report.timeline[2].slow == 1)
        #expect(report.clientCores == 0.5)
    }

    @Test("fails any loss, excess, missing acknowledgement, reordering or dropped connection", arguments: [
        (29, 10, 0, 0, "1 deliveries lost"), (31, 10, 0, 0, "more than expected"), (30, 9, 0, 0, "9 of 10 writes"),
        (30, 10, 1, 0, "closed 1 connections"), (30, 10, 0, 2, "2 updates out of order"),
    ])
    func failsIncompleteRuns(received: Int, acks: Int, closed: Int, outOfOrder: Int, reason: String) {
        let report = report(received: received, acks: acks, closed: closed, outOfOrder: outOfOrder)
        #expect(!report.ok)
        #expect(report.failures.contains { $0.contains(reason) }, "\(report.failures)")
        #expect(ReportText.lines(report).last?.hasPrefix("FAILED") == true)
    }

    @Test("plots a well-formed SVG with escaped text")
    func plots() {
        var report = report(received: 30)
        report.url = "ws://a<b>&c"
        let svg = SVGPlot.render(report)
        #expect(svg.hasPrefix("<svg "))
        #expect(svg.hasSuffix("</svg>\n"))
        #expect(svg.split(separator: "<polyline", omittingEmptySubsequences: false).count - 1 >= 3)
        #expect(SVGPlot.escape("a<b>&\"c") == "a&lt;b&gt;&amp;&quot;c")
        report.scenario = .connections
        let connections = SVGPlot.render(report)
        #expect(connections.contains("connections ready"))
        #expect(connections.split(separator: "<polyline", omittingEmptySubsequences: false).count - 1 == 2)
    }

    @Test("the server's kernel CPU is never more than its total, whatever the times' rounding")
    func kernelShareWithinTotal() {
        // Subtracting the totals gave 0.12999999999999545 s in all against 0.1299999999999999 s in the kernel.
        let noUserTime = ServerObserver.cpuUsed(from: (user: 90.14, kernel: 3.06), to: (user: 90.14, kernel: 3.19))
        #expect(noUserTime.total == noUserTime.kernel && noUserTime.kernel > 0)
        let both = ServerObserver.cpuUsed(from: (user: 1.5, kernel: 0.25), to: (user: 2.0, kernel: 0.5))
        #expect(both.total == 0.75 && both.kernel == 0.25)
    }
}
