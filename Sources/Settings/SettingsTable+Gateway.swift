extension SettingsTable {
    /// Per-connection limits of the wire protocol and long polling.
    public enum Gateway {
        public static let conflationThresholdBytes = Setting(
            "gateway.conflationThresholdBytes", default: 262_144, .range(0...maxBytes),
            doc: "unsent bytes above which a connection's listens are conflated (latest data once it drains)")
        public static let maxListensPerConnection = Setting(
            "gateway.maxListensPerConnection", default: 10_000, .range(1...10_000_000),
            doc: "listens one connection may hold; more get `limit_exceeded`")
        public static let maxOnDisconnectPerConnection = Setting(
            "gateway.maxOnDisconnectPerConnection", default: 1_000, .range(1...10_000_000),
            doc: "onDisconnect locations one connection may register; more get `limit_exceeded`")
        public static let maxAuthAttemptsPerSecond = Setting(
            "gateway.maxAuthAttemptsPerSecond", default: 10, .range(1...10_000),
            doc: "`auth` requests a connection may make a second; more get `limit_exceeded`")
        public static let maxOutstandingRequestsPerConnection = Setting(
            "gateway.maxOutstandingRequestsPerConnection", default: 10_000, .range(1...10_000_000),
            doc: "requests a connection may have awaiting answers; more get `limit_exceeded`")
        public static let longPollHoldSeconds = Setting(
            "gateway.longPollHoldSeconds", default: 20.0, .from(0.1, toFraction: 0.9, of: longPollIdleTimeoutSeconds),
            doc: "a held poll is answered after this long when nothing happens (at most 0.9 of the idle timeout)")
        public static let longPollIdleTimeoutSeconds = Setting(
            "gateway.longPollIdleTimeoutSeconds", default: 30.0, .range(0.5...3_600),
            doc: "a long-poll session without a request for this long has gone")

        static let all: [any AnySetting] = [
            conflationThresholdBytes, maxListensPerConnection, maxOnDisconnectPerConnection, maxAuthAttemptsPerSecond,
            maxOutstandingRequestsPerConnection, longPollHoldSeconds, longPollIdleTimeoutSeconds,
        ]
    }

    /// The REST API and event streams.
    public enum REST {
        public static let corsOrigins = Setting(
            "rest.corsOrigins", default: [String](), flag: "--cors-origin",
            doc: "origins allowed to call the REST API from a browser (the flag is repeatable; none: any)")
        public static let keepAliveSeconds = Setting(
            "rest.keepAliveSeconds", default: 30.0, .range(0.001...3_600),
            doc: "quiet seconds after which an event stream gets a `keep-alive` event")
        public static let requireIndexes = Setting(
            "rest.requireIndexes", default: true,
            doc: "refuse REST queries ordered by a child or value the rules do not index (400, as Firebase)")

        static let all: [any AnySetting] = [corsOrigins, keepAliveSeconds, requireIndexes]
    }
}
