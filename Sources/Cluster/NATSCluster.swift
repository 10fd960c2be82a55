import CNats
import Store
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A connection to the NATS servers of a Canopy cluster, shared by every namespace's ``JetStreamLog``.
///
/// nats.c reconnects by itself (to any of the URLs, for ever, every 250 ms), so a server that dies or restarts
/// costs a pause, not the connection. A server that stalls (a long pause, a frozen VM: its socket stays open and
/// nothing comes back) is found by pings: after ``maxPingsOut`` unanswered pings, one every ``pingIntervalMillis``,
/// the connection is stale and nats.c moves to another server, as it would had the server died. Without them
/// (nats.c's default is a ping every 2 minutes) a stalled server held this node's appends and its log's consumer
/// for as long as it stalled.
///
/// Each namespace's log hears when the connection is lost and made again (``ConnectionEvents``): while it is
/// lost, the node is cut off from the log.
public final class NATSCluster: @unchecked Sendable {
    /// How often the server is pinged.
    static let pingIntervalMillis: Int64 = 1000
    /// Unanswered pings after which the connection is stale: a stall is left within about 2–3 s.
    static let maxPingsOut: Int32 = 2

    // The connection pointer is set once in `init` and only freed in `deinit`; nats.c is thread-safe.
    let connection: OpaquePointer
    /// This process's name among the log's writers (random per start).
    public let node: String
    /// Copies of each stream (at most the number of servers in a JetStream cluster).
    public let replicas: Int
    /// Log positions between snapshots (0: none).
    public let snapshotInterval: UInt64
    /// Who hears that the connection was lost or made again, or a subscription failed (retained for the connection's
    /// life: nats.c calls it).
    let events = ConnectionEvents()
    /// Whom each log tells what the operator should know about its following (on any thread).
    let report: @Sendable (FollowingEvent) -> Void

    /// Connects to `urls` (`nats://host:port`, several for a cluster); each namespace's streams get `replicas`
    /// copies, and a snapshot every `snapshotInterval` log positions; `report` hears each log's ``FollowingEvent``s.
    ///
    /// - Throws: ``ReplicationError`` when the URLs are malformed or no server is reachable.
    public init(urls: [String], replicas: Int, snapshotInterval: UInt64,
                report: @escaping @Sendable (FollowingEvent) -> Void = { _ in }) throws(ReplicationError) {
        var random = SystemRandomNumberGenerator()
        node = String(random.next() & 0xFFFF_FFFF_FFFF, radix: 36)
        self.replicas = max(1, replicas)
        self.snapshotInterval = snapshotInterval
        self.report = report
        var connection: OpaquePointer?
        let name = "canopy-\(node)"
        var cStrings = urls.map { strdup($0) }
        defer { for string in cStrings { free(string) } }
        let closure = Unmanaged.passUnretained(events).toOpaque()
        let status = cStrings.withUnsafeMutableBufferPointer { pointers in
            pointers.withMemoryRebound(to: UnsafePointer<CChar>?.self) { servers in
                canopy_nats_connect(&connection, servers.baseAddress, Int32(servers.count), name,
                                    Self.pingIntervalMillis, Self.maxPingsOut, { _, closure in
                                        guard let closure else { return }
                                        Unmanaged<ConnectionEvents>.fromOpaque(closure).takeUnretainedValue()
                                            .changed(connected: false)
                                    }, { _, closure in
                                        guard let closure else { return }
                                        Unmanaged<ConnectionEvents>.fromOpaque(closure).takeUnretainedValue()
                                            .changed(connected: true)
                                    }, { _, subscription, status, closure in
                                        guard let closure, let subscription else { return }
                                        Unmanaged<ConnectionEvents>.fromOpaque(closure).takeUnretainedValue()
                                            .failed(subscription, status)
                                    }, closure)
            }
        }
        guard status == NATS_OK, let connection else {
            throw ReplicationError("cannot connect to \(urls.joined(separator: ",")): \(NATSCluster.text(status))")
        }
        self.connection = connection
    }

    deinit {
        natsConnection_Destroy(connection)
    }

    /// The log of `namespace` (its stream is created when first opened).
    public func log(for namespace: String) -> JetStreamLog {
        JetStreamLog(cluster: self, namespace: namespace)
    }

    /// nats.c's text for `status`.
    static func text(_ status: natsStatus) -> String {
        natsStatus_GetText(status).map { String(cString: $0) } ?? "status \(status.rawValue)"
    }
}

/// The listeners of a ``NATSCluster``'s connection: each open log, told when the connection is lost (nats.c noticed
/// the server gone, or stale after its unanswered pings) and when it is made again, and each log's consumer, told
/// when it fails.
final class ConnectionEvents: Sendable {
    private let listeners = Mutex<[ObjectIdentifier: @Sendable (_ connected: Bool) -> Void]>([:])
    /// Whom to tell about each watched subscription's failures, by the subscription's address.
    private let subscriptionListeners = Mutex<[UInt: @Sendable (natsStatus) -> Void]>([:])

    /// Tells `listener` of every change from now on, until ``remove(_:)`` with the same `owner`.
    func add(_ owner: AnyObject, _ listener: @escaping @Sendable (_ connected: Bool) -> Void) {
        listeners.withLock { $0[ObjectIdentifier(owner)] = listener }
    }

    func remove(_ owner: AnyObject) {
        _ = listeners.withLock { $0.removeValue(forKey: ObjectIdentifier(owner)) }
    }

    /// On nats.c's thread.
    func changed(connected: Bool) {
        for listener in listeners.withLock({ Array($0.values) }) { listener(connected) }
    }

    /// Tells `listener` what nats.c reports failing about `subscription`, until ``unwatch(_:)``.
    func watch(_ subscription: OpaquePointer, _ listener: @escaping @Sendable (natsStatus) -> Void) {
        subscriptionListeners.withLock { $0[UInt(bitPattern: subscription)] = listener }
    }

    func unwatch(_ subscription: OpaquePointer) {
        _ = subscriptionListeners.withLock { $0.removeValue(forKey: UInt(bitPattern: subscription)) }
    }

    /// On nats.c's thread: a report about a subscription (one already destroyed is no longer watched).
    func failed(_ subscription: OpaquePointer, _ status: natsStatus) {
        subscriptionListeners.withLock { $0[UInt(bitPattern: subscription)] }?(status)
    }
}
