import Testing

@testable import LoadTester

/// The Redis and NATS protocols' settings (runs against real servers are in Tests/Python/test_bench_peers.py).
@Suite("canopy bench settings for Redis and NATS")
struct PeerConfigurationTests {
    @Test("a peer protocol needs its own URL scheme, and WebSocket protocols refuse it")
    func urlSchemes() {
        var configuration = BenchConfiguration(scenario: .fanout)
        configuration.wireProtocol = .redis
        configuration.url = "ws://127.0.0.1:9000"
        #expect(throws: BenchConfigurationError.self) { try configuration.validate() }
        configuration.url = "nats://127.0.0.1:4222"
        #expect(throws: BenchConfigurationError.self) { try configuration.validate() }
        configuration.url = "redis://127.0.0.1"
        #expect(throws: Never.self) { try configuration.validate() }
        configuration.wireProtocol = .firebase
        #expect(throws: BenchConfigurationError.self) { try configuration.validate() }
        configuration.wireProtocol = .nats
        configuration.scenario = .query
        configuration.url = "nats://127.0.0.1"
        #expect(throws: BenchConfigurationError.self) { try configuration.validate() }
    }

    @Test("several URLs name a cluster's nodes; they must share scheme and path")
    func clusterURLs() throws {
        var configuration = BenchConfiguration(scenario: .fanout)
        configuration.url = "ws://127.0.0.1:9000,ws://127.0.0.1:9001,ws://127.0.0.2:9002"
        #expect(throws: Never.self) { try configuration.validate() }
        #expect(try configuration.serverURLs.map(\.port) == [9000, 9001, 9002])
        configuration.url = "ws://127.0.0.1:9000,wss://127.0.0.1:9001"
        #expect(throws: BenchConfigurationError.self) { try configuration.validate() }
        configuration.url = "ws://127.0.0.1:9000,"
        #expect(throws: BenchConfigurationError.self) { try configuration.validate() }
    }
}
