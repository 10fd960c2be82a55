import DataModel
import Store
import Transport
import Synchronization

/// One database (Firebase's `ns`): its store and its live views.
///
/// The store reports every applied write on its sequencer, in the namespace's order; the namespace routes it
/// through the view registry to the views it may affect, which publish to their listens from there. Listens take
/// their place in the same order (``subscribe(_:rulesGate:request:denied:)``), so a listen sees exactly the writes
/// sequenced after the value it was given.
final class Namespace: Sendable {
    /// The namespace's name.
    let name: String
    /// Its tree and log; loads in the background when opened (everything submitted meanwhile waits).
    let store: Store
    /// Its live views.
    let registry: ViewRegistry

    init(name: String, configuration: StoreConfiguration,
         loaded: @escaping @Sendable (Result<LoadReport, JournalError>) -> Void)
    {
        let registry = ViewRegistry()
        let deliveries = DeliveryBatch()
        self.name = name
        self.registry = registry
        store = Store.opening(configuration: configuration, observer: { record in
            for view in registry.views(affectedBy: record.changes) { view.receive(record, into: deliveries) }
        }, afterTask: { deliveries.handOff() }, loaded: loaded)
    }

    /// The shared view of `query` at `path`, created when it is new (it loads when its first listen takes its place
    /// in the order, ``subscribe(_:rulesGate:request:denied:)``). Each call counts one reference, given back when
    /// the listen is refused or ends (``unsubscribe(_:)``).
    func acquireView(at path: Path, query: QueryParams, metrics: GatewayMetrics) -> View {
        let key = ViewKey(path: path, query: query)
        return registry.acquire(key) { View(key: key, query: query, metrics: metrics) }.view
    }

    /// Takes the listen's place in the namespace's order: loads its view if it is new, checks the read rules
    /// against the tree there, and subscribes (the initial data and `ok` follow from the view) or releases the view
    /// and calls `denied` on the listen's loop.
    func subscribe(_ subscription: Subscription, rulesGate: RulesGate, request: InitialRequest,
                   denied: @escaping @Sendable () -> Void)
    {
        let registry = self.registry
        store.inOrder { snapshot in
            let view = subscription.view
            view.loadIfNeeded(from: snapshot)
            guard snapshot.isAvailable,
                rulesGate.mayRead(subscription.path, query: subscription.filter, in: snapshot)
            else {
                registry.release(view)
                subscription.loop.execute { denied() }
                return
            }
            subscription.isRegistered = true
            view.subscribe(subscription, request: request)
        }
    }

    /// Ends a listen in order: after everything its connection submitted before, the view drops it (and goes once
    /// no listen is left). Pushes still on their way are dropped by the caller clearing `isActive`.
    func unsubscribe(_ subscription: Subscription) {
        let registry = self.registry
        store.inOrder { _ in
            guard subscription.isRegistered else { return }
            subscription.isRegistered = false
            subscription.view.unsubscribe(subscription)
            registry.release(subscription.view)
        }
    }
}
