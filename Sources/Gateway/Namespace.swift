import DataModel
import Store

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

    init(name: String, configuration: StoreConfiguration) throws(JournalError) {
        let registry = ViewRegistry()
        self.name = name
        self.registry = registry
        store = try Store(configuration: configuration) { record in
            for view in registry.views(affectedBy: record.changes) { view.receive(record) }
        }
    }
}
