/// The outcome of one `canopy bench` run: what was asked, what the server sustained, and whether anything was lost;
/// written as JSON with `--json` (snake_case keys) and printed for people.
public struct BenchReport: Codable, Sendable {
    /// The scenario run.
    public var scenario: BenchScenario
    /// The protocol the clients spoke.
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
    /// Deliveries the counted subscribers should have received (echo: the round trips completed).
    public var expectedDeliveries: Int
    /// Deliveries they did receive (echo: round trips).
    public var deliveries: Int
    /// `expectedDeliveries - deliveries`: any loss (or excess) fails the run.
    public var lost: Int
    /// Writes sent.
    public var writesSent: Int
    /// Writes acknowledged with `ok` (MQTT and raw: come back to their writer).
    public var writesAcknowledged: Int
    /// Writes answered with another status than `ok`.
    public var writesRejected: Int
    /// Updates out of order in rooms with one writer.
    public var outOfOrder: Int
    /// Pushes to ready subscribers that were not updates at or below their path.
    public var unexpectedPushes: Int
    /// query: children that left subscribers' windows.
    public var evictions: Int
    /// Deliveries (echo: round trips) per second over `elapsedSeconds`.
    public var deliveriesPerSecond: Double
    /// Acknowledged writes per second from the start to the last acknowledgement.
    public var writeAcksPerSecond: Double
    /// Write-to-delivery latency (echo: round trip).
    public var latency: LatencySummary?
    /// Write-to-acknowledgement latency.
    public var writeLatency: LatencySummary?
    /// CPU seconds the clients used during the workload.
    public var clientCPUSeconds: Double
    /// Client CPU nanoseconds per delivery.
    public var clientCPUNanosecondsPerDelivery: Double?
    /// Client CPU as cores kept busy over the workload.
    public var clientCores: Double
    /// What was read about the server, when `--server-pid` or `--metrics-url` was given.
    public var server: ServerFigures
    /// The stalled subscriber, when there was one.
    public var stall: StallFigures?
    /// How the connections opened: a point every 100 ms of the connect phase.
    public var connectTimeline: [ConnectPoint]
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
        /// Online CPU cores.
        public var cores: Int
        /// Physical memory in bytes.
        public var memoryBytes: Int
        /// The one-minute load average as the run started: other work on a shared machine shows here.
        public var loadAverageStart: Double?
        /// The one-minute load average as the run ended.
        public var loadAverageEnd: Double?
    }

    /// The workload's size and pacing.
    public struct Workload: Codable, Sendable {
        /// Connections that wrote.
        public var writers: Int
        /// Subscribers of each room (fanout and query: all of them; writes: the listeners).
        public var subscribersPerRoom: Int
        /// Paths the subscribers were spread over.
        public var rooms: Int
        /// Writes over all writers.
        public var writes: Int
        /// Bytes of each written object.
        public var payloadBytes: Int
        /// Writes each writer may have unacknowledged (nil with a rate).
        public var window: Int?
        /// Writes per second over all writers (nil: as fast as the window allows).
        public var rate: Double?
        /// query: the window size.
        public var limit: Int?
        /// Client processes.
        public var processes: Int
        /// Epoll threads per process.
        public var threads: Int
        /// Loopback source addresses the connections were spread over.
        public var sourceAddresses: Int
        /// Whether permessage-deflate was offered.
        public var deflate: Bool
        /// Whether the connections used TLS.
        public var tls: Bool
    }

    /// Connecting figures.
    public struct ConnectionFigures: Codable, Sendable {
        /// Connections planned.
        public var planned: Int
        /// Connections that became ready.
        public var opened: Int
        /// Connections that failed before they were ready.
        public var failed: Int
        /// Ready connections the server closed afterwards.
        public var closedByServer: Int
        /// Seconds from the first connect to the last connection ready.
        public var connectSeconds: Double
        /// Connections made ready per second (upgraded, and listening where the protocol listens).
        public var acceptsPerSecond: Double
    }

    /// Latency percentiles in microseconds (HdrHistogram, three significant digits; the maximum is exact).
    public struct LatencySummary: Codable, Sendable {
        /// Latencies recorded.
        public var count: Int
        /// The median.
        public var p50: Double
        /// The 90th percentile.
        public var p90: Double
        /// The 99th percentile.
        public var p99: Double
        /// The 99.9th percentile.
        public var p999: Double
        /// The largest.
        public var max: Double
    }

    /// What was read about the server.
    public struct ServerFigures: Codable, Sendable {
        /// CPU seconds over the workload (`/proc/PID/stat`).
        public var cpuSeconds: Double?
        /// CPU nanoseconds per delivery.
        public var cpuNanosecondsPerDelivery: Double?
        /// The part of ``cpuSeconds`` spent in the kernel (system time): system calls, and on loopback the TCP
        /// work of both ends, which every server pays alike.
        public var kernelCPUSeconds: Double?
        /// Kernel CPU nanoseconds per delivery.
        public var kernelCPUNanosecondsPerDelivery: Double?
        /// Resident memory before the first connection, in bytes.
        public var residentBeforeBytes: Int?
        /// Resident memory once every connection was ready.
        public var residentConnectedBytes: Int?
        /// Resident memory as the workload ended, before any connection closed.
        public var residentEndBytes: Int?
        /// The largest resident memory sampled (every 100 ms).
        public var residentMaxBytes: Int?
        /// The peak resident memory (`VmHWM`).
        public var residentPeakBytes: Int?
        /// (resident at the end − before connecting) ÷ connections opened.
        public var residentPerConnectionBytes: Double?
        /// The delta of `canopy_push_frames_encoded_total`: encodings, one per update when fan-out encodes once.
        public var framesEncoded: Int?
        /// The delta of `canopy_push_frames_delivered_total`.
        public var framesDelivered: Int?
        /// The delta of every `_total` counter that changed over the workload.
        public var metricDeltas: [String: Double]
        /// Why the metrics could not be read, if they could not.
        public var metricsError: String?
    }

    /// The stalled subscriber's story.
    public struct StallFigures: Codable, Sendable {
        /// Seconds it did not read.
        public var seconds: Double
        /// Updates it received.
        public var deliveries: Int
        /// Whether the server closed it.
        public var disconnected: Bool
        /// Why, when it did.
        public var disconnectReason: String?
        /// Whether it ended holding room 0's last value.
        public var latestState: Bool
        /// Seconds from resuming to holding the last value.
        public var catchUpSeconds: Double?
    }

    /// One moment of the connect phase.
    public struct ConnectPoint: Codable, Sendable {
        /// Seconds since the first connect.
        public var seconds: Double
        /// Connections ready by then.
        public var opened: Int
        /// Connections failed by then.
        public var failed: Int
        /// The server's resident memory then, in bytes (with `--server-pid`).
        public var serverResidentBytes: Int?
    }

    /// One second of the workload.
    public struct TimelinePoint: Codable, Sendable {
        /// Whole seconds since the workload's start.
        public var second: Int
        /// Seconds of the workload this point covers: 1, or less for the last, partial second.
        public var seconds: Double
        /// Deliveries in that second.
        public var deliveries: Int
        /// Writes acknowledged in that second.
        public var acks: Int
        /// Writes sent in that second.
        public var sent: Int
        /// The median latency of that second's deliveries, microseconds (0 when none).
        public var p50: Double
        /// Their 99th percentile.
        public var p99: Double
        /// Their largest.
        public var max: Double
        /// Deliveries slower than 10 ms.
        public var slow: Int
    }

    /// One point of the latency distribution.
    public struct DistributionPoint: Codable, Sendable {
        /// The percentile, 0...100.
        public var percentile: Double
        /// The latency there, in microseconds.
        public var microseconds: Double
    }
}
