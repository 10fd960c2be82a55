/// The outcome of one `canopy bench` run: what was asked, what the server sustained, and whether anything was lost;
/// written as JSON with `--json` (snake_case keys) and printed for people.
public struct BenchReport: Codable, Sendable {
    /// The scenario and protocol.
    public var scenario: BenchScenario
    public var wireProtocol: BenchProtocol
    /// The server URL.
    public var url: String
    /// The command line that produced the report, when the caller sets it.
    public var command: String?
    /// When the run started, ISO 8601 in UTC.
    public var date: String
    /// The client machine.
    public var machine: Machine
    /// The workload as run (after the scenario's defaults).
    public var workload: Workload
    /// Connecting.
    public var connections: ConnectionFigures
    /// Seconds from the workload's start to the last delivery (or acknowledgement, or the end of the hold or echo).
    public var elapsedSeconds: Double
    /// Deliveries counted subscribers should have received, and did (echo: round trips).
    public var expectedDeliveries: Int
    public var deliveries: Int
    /// `expectedDeliveries - deliveries`: any loss (or excess) fails the run.
    public var lost: Int
    /// Writes sent, acknowledged with `ok` (or come back, for MQTT and raw), and answered otherwise.
    public var writesSent: Int
    public var writesAcknowledged: Int
    public var writesRejected: Int
    /// Updates out of order in rooms with one writer, pushes that were not updates, and children that left query
    /// windows.
    public var outOfOrder: Int
    public var unexpectedPushes: Int
    public var evictions: Int
    /// Deliveries (echo: round trips) per second over `elapsedSeconds`.
    public var deliveriesPerSecond: Double
    /// Acknowledged writes per second from the start to the last acknowledgement.
    public var writeAcksPerSecond: Double
    /// Write-to-delivery latency (echo: round trip), and write-to-acknowledgement latency.
    public var latency: LatencySummary?
    public var writeLatency: LatencySummary?
    /// CPU seconds the clients used during the workload, per delivery, and as cores kept busy.
    public var clientCPUSeconds: Double
    public var clientCPUNanosecondsPerDelivery: Double?
    public var clientCores: Double
    /// What was read about the server, when `--server-pid` or `--metrics-url` was given.
    public var server: ServerFigures
    /// The stalled subscriber, when there was one.
    public var stall: StallFigures?
    /// Each second of the workload.
    public var timeline: [TimelinePoint]
    /// The latency distribution: (percentile, microseconds) points for the plot.
    public var distribution: [DistributionPoint]
    /// The first few errors the clients saw.
    public var errors: [String]
    /// Why the run failed, empty when it passed.
    public var failures: [String]
    /// Whether the run passed: everything delivered and acknowledged, nothing out of order, no connection lost.
    public var ok: Bool { failures.isEmpty }

    /// The client machine: cores and memory.
    public struct Machine: Codable, Sendable {
        public var cores: Int
        public var memoryBytes: Int
    }

    /// The workload's size and pacing.
    public struct Workload: Codable, Sendable {
        public var writers: Int
        public var subscribersPerRoom: Int
        public var rooms: Int
        public var writes: Int
        public var payloadBytes: Int
        /// Writes each writer may have unacknowledged (nil with a rate).
        public var window: Int?
        /// Writes per second over all writers (nil: as fast as the window allows).
        public var rate: Double?
        /// query: the window size.
        public var limit: Int?
        /// Processes, threads per process and loopback source addresses used.
        public var processes: Int
        public var threads: Int
        public var sourceAddresses: Int
        public var deflate: Bool
        public var tls: Bool
    }

    /// Connecting figures.
    public struct ConnectionFigures: Codable, Sendable {
        /// Connections planned, ready, failed before ready, and closed by the server afterwards.
        public var planned: Int
        public var opened: Int
        public var failed: Int
        public var closedByServer: Int
        /// Seconds from the first connect to the last connection ready.
        public var connectSeconds: Double
        /// Connections made ready per second (upgraded, and listening where the protocol listens).
        public var acceptsPerSecond: Double
    }

    /// Latency percentiles in microseconds (HdrHistogram, three significant digits; the maximum is exact).
    public struct LatencySummary: Codable, Sendable {
        public var count: Int
        public var p50: Double
        public var p90: Double
        public var p99: Double
        public var p999: Double
        public var max: Double
    }

    /// What was read about the server.
    public struct ServerFigures: Codable, Sendable {
        /// CPU seconds over the workload and per delivery (`/proc/PID/stat`).
        public var cpuSeconds: Double?
        public var cpuNanosecondsPerDelivery: Double?
        /// Resident memory: before connecting, once connected, at the end, the largest sampled (every 100 ms) and
        /// the peak (VmHWM); bytes.
        public var residentBeforeBytes: Int?
        public var residentConnectedBytes: Int?
        public var residentEndBytes: Int?
        public var residentMaxBytes: Int?
        public var residentPeakBytes: Int?
        /// (resident at the end − before connecting) ÷ connections opened.
        public var residentPerConnectionBytes: Double?
        /// Deltas of the push counters (`canopy_push_frames_encoded_total`, `…_delivered_total`) and of every other
        /// `_total` counter that changed over the workload.
        public var framesEncoded: Int?
        public var framesDelivered: Int?
        public var metricDeltas: [String: Double]
        /// Why the metrics could not be read, if they could not.
        public var metricsError: String?
    }

    /// The stalled subscriber's story.
    public struct StallFigures: Codable, Sendable {
        public var seconds: Double
        public var deliveries: Int
        public var disconnected: Bool
        public var disconnectReason: String?
        /// Whether it ended holding room 0's last value.
        public var latestState: Bool
        /// Seconds from resuming to holding the last value.
        public var catchUpSeconds: Double?
    }

    /// One second of the workload.
    public struct TimelinePoint: Codable, Sendable {
        public var second: Int
        /// Seconds of the workload this point covers: 1, or less for the last, partial second.
        public var seconds: Double
        public var deliveries: Int
        public var acks: Int
        public var sent: Int
        /// Latency percentiles of that second's deliveries, microseconds (0 when none).
        public var p50: Double
        public var p99: Double
        public var max: Double
        /// Deliveries slower than 10 ms.
        public var slow: Int
    }

    /// One point of the latency distribution.
    public struct DistributionPoint: Codable, Sendable {
        public var percentile: Double
        public var microseconds: Double
    }
}
