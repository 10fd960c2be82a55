import DataModel
import Rules
import Store

/// How the gateway stores data and serves namespaces.
public struct GatewayConfiguration: Sendable {
    /// Where namespaces persist (one subdirectory each); `nil` keeps every namespace in memory only.
    public var dataDirectory: String?
    /// Cluster mode: the log each namespace's store follows, shared with the other nodes (`nil`: a single node,
    /// persisting in ``dataDirectory``).
    public var replicatedLog: (@Sendable (_ namespace: String) -> any ReplicatedLog)?
    /// Cluster mode: whether a namespace exists in the cluster (some node created it), so that it is reachable
    /// through this node too (`nil`: a single node, where the data directory tells).
    public var existsInCluster: (@Sendable (_ namespace: String) -> Bool)?
    /// The namespace for connections that name none (`ns` missing or empty).
    public var defaultNamespace = DataDirectory.defaultNamespace
    /// The namespaces any client may create; others are created only with the admin credential.
    public var namespaceAllowList = NamespaceAllowList([])
    /// Any client may create a namespace by naming it, as the emulator lets it: set when the server listens on
    /// loopback only, where only local programs can reach it.
    public var createsNamespacesOnFirstUse = false
    /// Most namespaces open at once; a connection naming another one is refused with 503.
    public var maxNamespaces = 64
    /// When acknowledged writes reach the disk.
    public var fsyncPolicy = FsyncPolicy.always
    /// Pending outbound bytes above which a connection's listens are conflated: their pushes are skipped until the
    /// connection drains, then each gets its view's latest data in one push (see the README's backpressure policy).
    public var conflationThresholdBytes = 256 * 1024
    /// The security rules to enforce (their ``RulesHolder/rules`` `nil`: every read and write is allowed, the
    /// emulator's open mode).
    public var rules = RulesLibrary(defaults: RulesHolder(nil))
    /// Log every denied operation with each rule tried on the way down and its outcome.
    public var explainDenials = false
    /// Refuse REST queries ordered by a child or by value that the rules in force do not index (400, as Firebase);
    /// without rules every query is served.
    public var restRequiresIndexes = true
    /// Origins allowed to call the REST API from a browser; empty allows every origin (`*`).
    public var corsOrigins: [String] = []
    /// Quiet seconds after which an event stream gets a `keep-alive` event.
    public var streamKeepAliveSeconds = 30.0
    /// Unsent bytes at which an event stream whose client stopped reading is cut off.
    public var streamCutOffBytes = 1024 * 1024
    /// Most listens one wire connection may hold; more are refused with `limit_exceeded`.
    public var maxListensPerConnection = 10_000
    /// Most onDisconnect locations one wire connection may register; more are refused with `limit_exceeded`.
    public var maxOnDisconnectPerConnection = 1_000
    /// Most requests one wire connection may have awaiting their answers; more are refused with `limit_exceeded`.
    public var maxOutstandingRequestsPerConnection = 10_000
    /// Most `auth` requests one wire connection may make a second (with as many saved up); more are refused
    /// with `limit_exceeded`.
    public var maxAuthAttemptsPerSecond = 10
    /// Whether App Check tokens are checked, and what a missing or invalid one does.
    public var appCheck = AppCheckPolicy()
    /// The long-poll transport's timing and limits (long-polling.md).
    public var longPoll = LongPollSettings()
    /// Server time in milliseconds since the Unix epoch (hello `ts`, server timestamps).
    public var clock: @Sendable () -> Double = StoreConfiguration.systemClock

    /// The defaults: in memory, namespace `default`.
    public init() {}
}
