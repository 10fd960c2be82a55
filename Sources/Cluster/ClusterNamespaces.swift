import CNats
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The namespaces that exist in a cluster, whichever node created them: those whose log stream exists on the NATS
/// servers. JetStream is the one record of them, so a namespace created through one node is reachable through
/// every node, and no node keeps a list of its own that could disagree.
///
/// The set is learned, not asked for on each connection (that would put a request to JetStream on an event loop):
/// the stream names are listed when the node starts and every ``refreshSeconds`` after, and JetStream's advisory
/// for each stream created (`$JS.EVENT.ADVISORY.STREAM.CREATED.<stream>`) adds a new one within milliseconds. A
/// listing that fails (no JetStream leader yet) is retried at the next refresh; names are only ever added, since
/// a namespace's log is never deleted by Canopy.
///
/// | Owner | State |
/// |---|---|
/// | `names` mutex | the namespaces known |
/// | `queue` | the JetStream context for listing, the advisory subscription, the refresh timer |
///
/// It lives as long as the process: the subscription holds it.
public final class ClusterNamespaces: @unchecked Sendable {
    /// Seconds between two listings of the streams.
    static let refreshSeconds = 5.0
    /// Where JetStream announces each stream it created; the last token is the stream's name.
    static let createdAdvisories = "$JS.EVENT.ADVISORY.STREAM.CREATED.*"

    private let cluster: NATSCluster
    private let names = Mutex<Set<String>>([])
    private let queue = DispatchQueue(label: "canopy.cluster.namespaces")
    // Owned by `queue`:
    private var context: OpaquePointer?
    private var subscription: OpaquePointer?
    private var timer: (any DispatchSourceTimer)?

    /// The namespaces of the cluster that `cluster` connects to; call ``start()`` to begin learning them.
    public init(cluster: NATSCluster) {
        self.cluster = cluster
    }

    /// Subscribes to stream creations, lists the streams now and schedules the refreshes. Any thread; returns at
    /// once (the first listing runs in the background).
    public func start() {
        queue.async { [self] in
            subscribeToCreations()
            list()
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + Self.refreshSeconds, repeating: Self.refreshSeconds)
            timer.setEventHandler { [weak self] in self?.list() }
            timer.resume()
            self.timer = timer
        }
    }

    /// Whether a namespace called `name` exists in the cluster (its log stream was created by some node).
    public func contains(_ name: String) -> Bool {
        names.withLock { $0.contains(name) }
    }

    /// Adds the namespace whose log is stream `stream` (other streams are ignored).
    func learned(stream: String) {
        guard let name = JetStreamLog.namespace(ofStream: stream) else { return }
        _ = names.withLock { $0.insert(name) }
    }

    private func subscribeToCreations() {
        let closure = Unmanaged.passRetained(self).toOpaque()
        var created: OpaquePointer?
        let status = natsConnection_Subscribe(&created, cluster.connection, Self.createdAdvisories, { _, _, message, closure in
            guard let message else { return }
            defer { natsMsg_Destroy(message) }
            guard let closure, let subject = natsMsg_GetSubject(message) else { return }
            let namespaces = Unmanaged<ClusterNamespaces>.fromOpaque(closure).takeUnretainedValue()
            let text = String(cString: subject)
            guard let stream = text.split(separator: ".").last else { return }
            namespaces.learned(stream: String(stream))
        }, closure)
        if status == NATS_OK {
            subscription = created
        } else {
            Unmanaged<ClusterNamespaces>.fromOpaque(closure).release()
        }
    }

    /// Lists every stream's name (on `queue`); a failure waits for the next refresh.
    private func list() {
        if context == nil {
            var created: OpaquePointer?
            guard natsConnection_JetStream(&created, cluster.connection, nil) == NATS_OK else { return }
            context = created
        }
        var list: UnsafeMutablePointer<jsStreamNamesList>?
        var error = jsErrCode(rawValue: 0)
        guard js_StreamNames(&list, context, nil, &error) == NATS_OK, let list else { return }
        defer { jsStreamNamesList_Destroy(list) }
        let count = Int(list.pointee.Count)
        guard count > 0, let entries = list.pointee.List else { return }
        for index in 0..<count {
            if let name = entries[index] { learned(stream: String(cString: name)) }
        }
    }
}
