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
}
