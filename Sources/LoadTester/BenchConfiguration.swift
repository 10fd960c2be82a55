/// Everything one `canopy bench` run needs: the scenario, the server, the workload's size and pacing, and what to
/// observe; built by the command line, checked by ``validate()``, and handed as JSON to worker processes.
public struct BenchConfiguration: Codable, Sendable, Equatable {
    /// What the run does.
    public var scenario: BenchScenario
    /// How the clients talk to the server.
    public var wireProtocol: BenchProtocol = .firebase
    /// The server: `ws://HOST:PORT[/PATH]` or `wss://…`; Firebase runs add `/.ws?v=5&ns=NS` when no path is given.
    public var url = "ws://127.0.0.1:9000"
    /// The Firebase namespace (`ns` of the connection URL and of REST requests).
    public var namespace = "bench"
    /// A credential sent with `auth` after the hello (Firebase), e.g. an ID token or the emulator's `owner`.
    public var authToken: String?
    /// `wss`: PEM file of the certificate authorities to trust (nil: the system's).
    public var caFile: String?
    /// `wss`: whether the server's certificate must verify; off only for self-signed benchmark servers.
    public var verifyPeer = true
    /// Offer permessage-deflate (RFC 7692) and inflate what the server compresses.
    public var deflate = false

    /// Subscribers in total (fanout, query), per room (rooms), or listeners (writes).
    public var subscribers = 1000
    /// Paths the subscribers are spread over (rooms).
    public var rooms = 1
    /// Connections that write.
    public var writers = 1
    /// Connections of the `connections` and `echo` scenarios.
    public var connections = 100
    /// Writes in total over all writers (fanout, rooms, query, writes).
    public var messages = 1000
    /// Writes per second over all writers; nil: as fast as each writer's window of unacknowledged writes allows.
    public var rate: Double?
    /// Seconds to drive the workload: with `rate` it sets `messages` to rate × duration; `echo` measures this
    /// long; `connections` holds the connections this long once all are open.
    public var duration: Double?
    /// Writes each writer may have unacknowledged (without `rate`).
    public var window = 32
    /// Bytes of each written JSON object (padded), or of each echo message.
    public var payload = 64
    /// query: the window size K of `orderByChild(orderBy).limitToLast(K)`.
    public var limit = 50
    /// query: children written before the subscribers listen, so that every window starts full.
    public var prefill = 50
    /// query: the child the list is ordered by: `ts` (the send time) or `seq`.
    public var orderBy = "ts"
    /// connections: whether every connection listens to the same path (default: each to its own).
    public var sharedPath = false

    /// Connections started per second (nil: as fast as `connectWindow` allows).
    public var rampUp: Double?
    /// Connections allowed between `connect` and being ready (upgraded and listening), over all threads.
    public var connectWindow = 256
    /// Epoll threads per process.
    public var threads = 1
    /// Client processes; nil: as many as the open-file limit requires.
    public var processes: Int?
    /// Source addresses (127.0.0.1, .2, …) to spread loopback connections over; nil: one per 25,000 connections
    /// beyond 28,000 (the loopback ephemeral port range is ~28,000 per source address).
    public var sourceAddresses: Int?
    /// Seconds the whole run may take.
    public var timeout = 120.0
    /// Seconds without any delivery or acknowledgement after which the missing ones count as lost.
    public var stallLimit = 10.0

    /// fanout and rooms: seconds the extra stalled subscriber of room 0 stops reading (0: no stalled subscriber).
    public var stallSeconds = 0.0
    /// Seconds into the workload at which the stalled subscriber stops reading.
    public var stallAfter = 1.0

    /// The server's process: its CPU time and memory are read from `/proc`.
    public var serverPID: Int?
    /// The server's Prometheus endpoint (`http://HOST:PORT/.metrics`), read before and after the workload.
    public var metricsURL: String?

    /// A configuration with the scenario's defaults.
    public init(scenario: BenchScenario) {
        self.scenario = scenario
        switch scenario {
        case .fanout:
            break
        case .rooms:
            rooms = 100
            subscribers = 100
            messages = 10_000
        case .query:
            subscribers = 100
        case .writes:
            writers = 100
            subscribers = 2
            messages = 100_000
            window = 8
        case .connections:
            connections = 10_000
        case .echo:
            wireProtocol = .raw
            url = "ws://127.0.0.1:9000/echo"
        }
    }
}

/// The workloads `canopy bench` drives.
public enum BenchScenario: String, Codable, Sendable, CaseIterable {
    /// N subscribers listen to one path; writers update it.
    case fanout
    /// R paths × N subscribers each; writers spread over the paths (a chat workload).
    case rooms
    /// Subscribers hold `orderByChild(...).limitToLast(K)` windows on a list writers append to (a news feed).
    case query
    /// Many writers, few listeners: acknowledged writes per second and write latency.
    case writes
    /// C idle connections with one listen each, opened as fast as the server accepts them.
    case connections
    /// Raw WebSocket round trips: each connection keeps one message in flight (transport benchmark).
    case echo
}

/// The protocols the clients speak.
public enum BenchProtocol: String, Codable, Sendable, CaseIterable {
    /// The Firebase Realtime Database wire protocol (`/.ws?v=5`).
    case firebase
    /// MQTT 3.1.1 over WebSocket (subprotocol `mqtt`), QoS 0: subscribe and publish.
    case mqtt
    /// Plain WebSocket messages to a broadcast (fanout, connections) or echo (echo) endpoint.
    case raw
    /// Redis pub/sub (RESP2 `SUBSCRIBE`/`PUBLISH`) on plain TCP (`--url redis://HOST:PORT`).
    case redis
    /// The NATS core protocol (`SUB`/`PUB`) on plain TCP (`--url nats://HOST:PORT`).
    case nats

    /// Whether the protocol runs on plain TCP rather than WebSocket.
    public var isPlainTCP: Bool { self == .redis || self == .nats }
}

/// A configuration that cannot be run, with the reason.
public struct BenchConfigurationError: Error, CustomStringConvertible, Equatable {
    /// What is wrong, naming the option.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
