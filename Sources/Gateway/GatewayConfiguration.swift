import DataModel
import Rules
import Store

/// How the gateway stores data and serves namespaces.
public struct GatewayConfiguration: Sendable {
    /// Where namespaces persist (one subdirectory each); `nil` keeps every namespace in memory only.
    public var dataDirectory: String?
    /// The namespace for connections that name none (`ns` missing or empty).
    public var defaultNamespace = DataDirectory.defaultNamespace
    /// Most namespaces open at once; a connection naming another one is refused with 503.
    public var maxNamespaces = 64
    /// How each namespace's tree is sharded.
    public var shardLayout = ShardLayout(count: StoreConfiguration.defaultShardCount)
    /// When acknowledged writes reach the disk.
    public var fsyncPolicy = FsyncPolicy.always
    /// Pending outbound bytes above which a connection's listens are conflated: their pushes are skipped until the
    /// connection drains, then each gets its view's latest data in one push (see the README's backpressure policy).
    public var conflationThresholdBytes = 256 * 1024
    /// The security rules to enforce (their ``RulesHolder/rules`` `nil`: every read and write is allowed, the
    /// emulator's open mode).
    public var rules = RulesHolder(nil)
    /// Log every denied operation with each rule tried on the way down and its outcome.
    public var explainDenials = false
    /// The rules' `.indexOn` declarations, for the `no_index` listen warning.
    public var indexes = IndexDeclarations()
    /// Server time in milliseconds since the Unix epoch (hello `ts`, server timestamps).
    public var clock: @Sendable () -> Double = StoreConfiguration.systemClock

    /// The defaults: in memory, namespace `default`.
    public init() {}
}
