import DataModel
import Store
import Synchronization

/// One database (Firebase's `ns`): its store and its live views.
///
/// The store reports every applied write on the reporting shard's queue; the namespace routes it through the view
/// registry to the views it may affect, which publish to their listens from there.
final class Namespace: Sendable {
    /// The namespace's name.
    let name: String
    /// Its tree.
    let store: Store
    /// Its live views.
    let registry: ViewRegistry
    /// Push ids for REST `POST`, strictly increasing within the namespace.
    private let pushIDs = Mutex(PushIDGenerator())

    init(name: String, configuration: StoreConfiguration) throws(JournalError) {
        let registry = ViewRegistry()
        self.name = name
        self.registry = registry
        store = try Store(configuration: configuration) { record in
            for view in registry.views(affectedBy: record.changes) { view.receive(record) }
        }
    }

    /// A new push id for a child created at `timestamp` (milliseconds since the Unix epoch).
    func nextPushID(timestamp: Double) -> Key {
        Key(trusted: pushIDs.withLock { $0.next(timestamp: Int64(timestamp)) })
    }

    /// The shared view of `query` at `path`, created and loaded when it is new; give it back with
    /// `registry.release(_:)` when the listen ends.
    func acquireView(at path: Path, query: QueryParams, metrics: GatewayMetrics) -> View {
        let key = ViewKey(path: path, query: query)
        let store = self.store
        let (view, created) = registry.acquire(key) {
            View(key: key, query: query, owner: store.shard(for: path), shardCount: store.layout.count,
                 metrics: metrics)
        }
        if created { view.load(from: store) }
        return view
    }
}
