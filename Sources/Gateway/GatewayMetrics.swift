import CoreMetrics
import Prometheus
import Transport

/// The gateway's counters and gauges, exposed at `/.metrics` in the Prometheus text format.
///
/// Counters go through swift-metrics handlers backed by this gateway's own Prometheus registry (not the
/// process-wide default, so several servers in one test process keep separate numbers). Gauges of live objects
/// are recorded when the metrics are scraped.
public final class GatewayMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    /// Writes acknowledged and pushes delivered so far, readable (the Prometheus counters are not) for the
    /// control plane's figures (``Gateway/figures``).
    let writeCount = AtomicCounter()
    let deliveryCount = AtomicCounter()

    /// Counts an acknowledged write.
    func countWrite() {
        writes.increment()
        writeCount.increment()
    }

    /// Counts `count` pushes handed to connections.
    func countDeliveries(_ count: Int) {
        pushesDelivered.increment(by: count)
        deliveryCount.add(UInt64(count))
    }

    /// Push messages encoded: one per view change and distinct tag, never one per subscriber.
    let pushesEncoded: CoreMetrics.Counter
    /// Push messages handed to connections (one per subscriber per change).
    let pushesDelivered: CoreMetrics.Counter
    /// Pushes a slow connection skipped because it was behind; it got the latest data once it drained.
    let pushesConflated: CoreMetrics.Counter
    /// Times a connection fell behind and had its listens conflated.
    let conflations: CoreMetrics.Counter
    /// Writes acknowledged (`p`, `m` and onDisconnect writes that ran).
    let writes: CoreMetrics.Counter
    /// Writes rejected (stale hash, invalid data, permission, unavailable).
    let rejectedWrites: CoreMetrics.Counter
    /// Listens registered.
    let listens: CoreMetrics.Counter
    /// One-shot reads (`g`).
    let reads: CoreMetrics.Counter
    /// Messages received from clients (after reassembly).
    let messagesReceived: CoreMetrics.Counter
    /// Malformed messages answered with an error or a close.
    let protocolErrors: CoreMetrics.Counter
    /// Wire sessions opened.
    let sessions: CoreMetrics.Counter
    /// REST requests answered (not counting event streams).
    let restRequests: CoreMetrics.Counter
    /// REST event streams opened.
    let streamsOpened: CoreMetrics.Counter
    /// Event streams cut off because their client stopped reading.
    let streamsCutOff: CoreMetrics.Counter
    /// Cluster mode: another replica's tree hash differed from this one's at the same log position.
    let divergences: CoreMetrics.Counter
    /// Requests refused by a per-connection limit, by limit.
    let refusedListens: CoreMetrics.Counter
    let refusedOnDisconnects: CoreMetrics.Counter
    let refusedAuths: CoreMetrics.Counter
    let refusedOutstanding: CoreMetrics.Counter
    /// Times a namespace's disk filled up (writes refused until space was freed).
    let diskFull: CoreMetrics.Counter
    /// Journals that failed for good (a failed `fdatasync` or write): their namespaces acknowledge no more writes.
    let journalFailures: CoreMetrics.Counter
    /// Connections and requests refused because they named a namespace that does not exist and may not create it.
    let namespacesRefused: CoreMetrics.Counter
    /// Long-poll requests received (long-polling.md §1).
    let longPollRequests: CoreMetrics.Counter
    /// Long-poll sessions that moved to a WebSocket (§7).
    let longPollUpgrades: CoreMetrics.Counter
    /// Long-poll sessions ended because their client stopped polling (§5).
    let longPollExpired: CoreMetrics.Counter
    /// Long-poll sessions ended because messages waited for polls beyond the outbound limit (§8).
    let longPollSlowConsumers: CoreMetrics.Counter

    /// App Check tokens found valid, expired or invalid (wire `appcheck`, URL `ac`, REST header).
    let appCheckValid: CoreMetrics.Counter
    let appCheckExpired: CoreMetrics.Counter
    let appCheckInvalid: CoreMetrics.Counter
    /// Data requests made without a valid App Check token (counted in monitor and enforce mode).
    let appCheckMissing: CoreMetrics.Counter
    /// Data requests refused for want of a valid App Check token (enforce mode).
    let appCheckRefused: CoreMetrics.Counter
    /// `apc` pushes sent: a connection's App Check token expired.
    let appCheckRevoked: CoreMetrics.Counter

    private let liveSessions: CoreMetrics.Gauge
    private let liveListens: CoreMetrics.Gauge
    private let liveViews: CoreMetrics.Gauge
    private let liveNamespaces: CoreMetrics.Gauge
    private let liveStreams: CoreMetrics.Gauge
    private let liveLongPolls: CoreMetrics.Gauge

    init() {
        let factory = PrometheusMetricsFactory(registry: registry)
        func counter(_ name: String) -> CoreMetrics.Counter {
            CoreMetrics.Counter(label: name, dimensions: [], factory: factory)
        }
        func gauge(_ name: String) -> CoreMetrics.Gauge {
            CoreMetrics.Gauge(label: name, dimensions: [], factory: factory)
        }
        pushesEncoded = counter("canopy_push_frames_encoded_total")
        pushesDelivered = counter("canopy_push_frames_delivered_total")
        pushesConflated = counter("canopy_push_frames_conflated_total")
        conflations = counter("canopy_conflations_total")
        writes = counter("canopy_writes_total")
        rejectedWrites = counter("canopy_writes_rejected_total")
        listens = counter("canopy_listens_total")
        reads = counter("canopy_reads_total")
        messagesReceived = counter("canopy_wire_messages_received_total")
        protocolErrors = counter("canopy_wire_protocol_errors_total")
        sessions = counter("canopy_wire_sessions_total")
        restRequests = counter("canopy_rest_requests_total")
        streamsOpened = counter("canopy_event_streams_total")
        streamsCutOff = counter("canopy_event_streams_cut_off_total")
        divergences = counter("canopy_cluster_divergences_total")
        refusedListens = counter("canopy_limit_listens_refused_total")
        refusedOnDisconnects = counter("canopy_limit_ondisconnect_refused_total")
        refusedAuths = counter("canopy_limit_auth_refused_total")
        refusedOutstanding = counter("canopy_limit_outstanding_refused_total")
        namespacesRefused = counter("canopy_namespaces_refused_total")
        diskFull = counter("canopy_store_disk_full_total")
        journalFailures = counter("canopy_store_journal_failures_total")
        longPollRequests = counter("canopy_longpoll_requests_total")
        longPollUpgrades = counter("canopy_longpoll_upgrades_total")
        longPollExpired = counter("canopy_longpoll_expired_total")
        longPollSlowConsumers = counter("canopy_longpoll_slow_consumers_total")
        appCheckValid = counter("canopy_appcheck_valid_total")
        appCheckExpired = counter("canopy_appcheck_expired_total")
        appCheckInvalid = counter("canopy_appcheck_invalid_total")
        appCheckMissing = counter("canopy_appcheck_missing_total")
        appCheckRefused = counter("canopy_appcheck_refused_total")
        appCheckRevoked = counter("canopy_appcheck_revoked_total")
        liveSessions = gauge("canopy_wire_sessions")
        liveListens = gauge("canopy_listens")
        liveViews = gauge("canopy_views")
        liveNamespaces = gauge("canopy_namespaces")
        liveStreams = gauge("canopy_event_streams")
        liveLongPolls = gauge("canopy_longpoll_sessions")
    }

    /// Records the live gauges and returns every metric in the Prometheus text format.
    func exposition(sessions: Int, longPolls: Int, listens: Int, views: Int, namespaces: Int, streams: Int,
                    extra: [UInt8]) -> [UInt8]
    {
        liveSessions.record(sessions)
        liveLongPolls.record(longPolls)
        liveStreams.record(streams)
        liveListens.record(listens)
        liveViews.record(views)
        liveNamespaces.record(namespaces)
        var buffer = extra
        registry.emit(into: &buffer)
        return buffer
    }
}
