import Auth
import Logging
import Transport

/// What a wire session needs from the server, and nothing more: its limits, the clock, the metrics, the credential
/// verifiers, the directory of live sessions, the log and the `.indexOn` declarations of a namespace's rules.
///
/// The gateway makes one and every session shares it (one reference per session). A test makes its own, with a
/// manual clock and the limits it exercises, and drives sessions in memory (``WireSession`` writes to a
/// ``WireChannel``; the test's loop runs its work).
final class SessionServices: Sendable {
    /// The per-connection limits.
    let limits: SessionLimits
    /// Server time, milliseconds since the Unix epoch.
    let clock: @Sendable () -> Double
    /// Monotonic nanoseconds, for pacing (never goes back when the wall clock does).
    let monotonicNanoseconds: @Sendable () -> UInt64
    /// Counters and gauges.
    let metrics: GatewayMetrics
    /// Verifies `auth` / `gauth` credentials.
    let tokenVerifier: TokenVerifier
    /// How App Check tokens are verified and enforced.
    let appCheck: AppCheckPolicy
    /// The live sessions, by id (for `ls`, the listen count, inspection).
    let directory: SessionDirectory
    /// The server's log.
    let logger: Logger
    /// The `.indexOn` declarations of the rules of a namespace, by name.
    let indexes: @Sendable (_ namespace: String) -> IndexDeclarations

    init(limits: SessionLimits, clock: @escaping @Sendable () -> Double,
         monotonicNanoseconds: @escaping @Sendable () -> UInt64 = MonotonicClock.nowNanoseconds,
         metrics: GatewayMetrics, tokenVerifier: TokenVerifier, appCheck: AppCheckPolicy, directory: SessionDirectory, logger: Logger,
         indexes: @escaping @Sendable (_ namespace: String) -> IndexDeclarations)
    {
        self.limits = limits
        self.clock = clock
        self.monotonicNanoseconds = monotonicNanoseconds
        self.metrics = metrics
        self.tokenVerifier = tokenVerifier
        self.appCheck = appCheck
        self.directory = directory
        self.logger = logger
        self.indexes = indexes
    }
}

/// The limits a wire session enforces, each named after its setting in the answers that refuse a request.
struct SessionLimits: Sendable {
    /// `gateway.maxListensPerConnection`.
    var maxListens: Int
    /// `gateway.maxOutstandingRequestsPerConnection`.
    var maxOutstandingRequests: Int
    /// `gateway.maxAuthAttemptsPerSecond`.
    var maxAuthAttemptsPerSecond: Int
    /// `gateway.maxOnDisconnectPerConnection`.
    var maxOnDisconnects: Int
    /// `gateway.conflationThresholdBytes`: unsent bytes from which a listen's pushes are conflated.
    var conflationThresholdBytes: Int

    /// The limits of `configuration`.
    init(_ configuration: GatewayConfiguration) {
        maxListens = configuration.maxListensPerConnection
        maxOutstandingRequests = configuration.maxOutstandingRequestsPerConnection
        maxAuthAttemptsPerSecond = configuration.maxAuthAttemptsPerSecond
        maxOnDisconnects = configuration.maxOnDisconnectPerConnection
        conflationThresholdBytes = configuration.conflationThresholdBytes
    }
}
