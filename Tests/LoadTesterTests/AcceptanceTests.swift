import Glibc
import Testing

@testable import LoadTester

/// Issue 7, acceptance 1: the tester against a running Canopy.
@Suite("canopy bench against a running Canopy")
struct AcceptanceTests {
    private func run(_ scenario: BenchScenario, _ change: (inout BenchConfiguration) -> Void) throws -> BenchReport {
        var configuration = BenchConfiguration(scenario: scenario)
        configuration.timeout = 60
        change(&configuration)
        return try BenchRunner(configuration: configuration, prints: false).run()
    }

    private func expectSanePercentiles(_ latency: BenchReport.LatencySummary?, count: Int) throws {
        let latency = try #require(latency)
        #expect(latency.count == count)
        #expect(latency.p50 > 0)
        #expect(latency.p50 <= latency.p90 && latency.p90 <= latency.p99)
        #expect(latency.p99 <= latency.p999 && latency.p999 <= latency.max)
    }

    @Test("a small fanout delivers exactly the expected count with sane percentiles")
    func smallFanout() throws {
        let canopy = try CanopyUnderTest()
        defer { canopy.stop() }
        let report = try run(.fanout) {
            $0.url = canopy.url()
            $0.subscribers = 20
            $0.messages = 100
            $0.metricsURL = "http://127.0.0.1:\(canopy.port)/.metrics"
        }
        #expect(report.ok, "\(report.failures)")
        #expect(report.expectedDeliveries == 2000)
        #expect(report.deliveries == 2000)
        #expect(report.lost == 0)
        #expect(report.writesAcknowledged == 100)
        #expect(report.connections.opened == 21)
        #expect(report.connections.failed == 0)
        #expect(report.outOfOrder == 0)
        #expect(report.deliveriesPerSecond > 0)
        try expectSanePercentiles(report.latency, count: 2000)
        try expectSanePercentiles(report.writeLatency, count: 100)
        #expect(report.timeline.reduce(0) { $0 + $1.deliveries } == 2000)
        #expect(!report.distribution.isEmpty)
        #expect(report.server.framesEncoded == 100)
        #expect(report.server.framesDelivered == 2000)
        #expect(try report.json().count > 0)
        #expect(SVGPlot.render(report).contains("<polyline"))
    }

    @Test("a run against a port with nothing listening fails with a clear error")
    func nothingListening() throws {
        let port = try unusedPort()
        #expect {
            _ = try run(.fanout) {
                $0.url = "ws://127.0.0.1:\(port)"
                $0.subscribers = 3
            }
        } throws: { error in
            guard case BenchRunError.noConnections(let planned, let firstError) = error else { return false }
            return planned == 4 && firstError.contains("Connection refused")
                && "\(error)".contains("none of the 4 connections could be opened")
        }
    }

    @Test("rooms, query windows, many writers and idle connections lose nothing", arguments: [
        BenchScenario.rooms, .query, .writes, .connections,
    ])
    func otherScenarios(scenario: BenchScenario) throws {
        let canopy = try CanopyUnderTest()
        defer { canopy.stop() }
        let report = try run(scenario) {
            $0.url = canopy.url()
            $0.rooms = scenario == .rooms ? 5 : 1
            $0.subscribers = 4
            $0.writers = scenario == .writes ? 10 : 1
            $0.messages = 200
            $0.prefill = 10
            $0.limit = 10
            $0.connections = 50
            $0.duration = 0.2
        }
        #expect(report.ok, "\(report.failures)")
        #expect(report.lost == 0)
        #expect(report.connections.failed == 0)
        switch scenario {
        case .rooms: #expect(report.deliveries == 200 * 4)
        case .query:
            #expect(report.deliveries == 200 * 4)
            #expect(report.evictions == 200 * 4)
        case .writes:
            #expect(report.deliveries == 200 * 4)
            #expect(report.writesAcknowledged == 200)
        case .connections: #expect(report.connections.opened == 50)
        default: break
        }
    }

    @Test("raw WebSocket fan-out and echo through Canopy's transport endpoints")
    func rawEndpoints() throws {
        let canopy = try CanopyUnderTest()
        defer { canopy.stop() }
        let fanout = try run(.fanout) {
            $0.wireProtocol = .raw
            $0.url = canopy.url("/broadcast")
            $0.subscribers = 10
            $0.messages = 100
        }
        #expect(fanout.ok, "\(fanout.failures)")
        #expect(fanout.deliveries == 1000)
        #expect(fanout.writesAcknowledged == 100)
        let echo = try run(.echo) {
            $0.url = canopy.url("/echo")
            $0.connections = 4
            $0.duration = 0.3
        }
        #expect(echo.ok, "\(echo.failures)")
        #expect(echo.deliveries > 0)
        try expectSanePercentiles(echo.latency, count: echo.deliveries)
    }

    /// A loopback port nothing listens on: bound once to find it, then released.
    private func unusedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        try #require(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
