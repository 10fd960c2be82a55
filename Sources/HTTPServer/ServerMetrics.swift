import Transport

/// Counters the server keeps about its connections (lock-free; read from any queue).
public final class ServerMetrics: Sendable {
    /// Connections accepted since start.
    public let accepted = AtomicCounter()
    /// Connections closed since start, by reason label.
    public let closedByReason: [String: AtomicCounter] = Dictionary(
        uniqueKeysWithValues: ["peer_closed", "local", "io_error", "handshake_timeout", "idle_timeout", "slow_consumer", "inbound_rate",
         "shutdown"]
            .map { ($0, AtomicCounter()) })
    /// Connections cut off because they read too slowly.
    public let slowConsumers = AtomicCounter()
    /// Connections closed because they sent faster than their inbound rate limit for too long.
    public let inboundRateCloses = AtomicCounter()
    /// WebSocket messages received.
    public let messagesReceived = AtomicCounter()

    init() {}

    func recordClose(_ reason: CloseReason) {
        closedByReason[reason.label]?.increment()
    }
}
