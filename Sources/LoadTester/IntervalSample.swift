/// What one worker saw during one second of the workload: the unit of the live progress line, the timeline and
/// the plots, handed from worker threads (and worker processes) to whoever reports.
struct IntervalSample: Codable, Sendable {
    /// Whole seconds since the workload's start.
    var second: Int
    /// Updates delivered to counted subscribers (echo: round trips completed).
    var deliveries = 0
    /// Writes acknowledged.
    var acks = 0
    /// Writes sent.
    var sent = 0
    /// Write-to-delivery latency of those deliveries (echo: round-trip time).
    var latency = LatencyHistogram()
    /// Write-to-acknowledgement latency of those acknowledgements.
    var writeLatency = LatencyHistogram()

    init(second: Int) {
        self.second = second
    }

    /// Whether nothing happened in the interval.
    var isEmpty: Bool { deliveries == 0 && acks == 0 && sent == 0 }
}
