import CoreMetrics
import DataModel
import Store
import Synchronization
import Transport

/// One shared view: a location and a query, the listens on it, and the data they hold.
///
/// A view turns each change record into one push, encodes it once per distinct tag or format (``PushFrames``), and hands
/// the same bytes to every subscribed connection, one work per event loop in the sequencer task's
/// ``DeliveryBatch``. Records, loading and membership changes
/// all arrive on the namespace's sequencer, in the namespace's order; the state sits behind a mutex because
/// connections read the latest data from their own loops.
final class View: @unchecked Sendable {
    /// The location and query identity.
    let key: ViewKey
    /// The view's query when it filters; `nil` for a default listen (most views: no 114-byte copy each).
    private let filteringQuery: QueryBox?
    /// Listens counted by the registry; guarded by the registry's lock.
    var references = 0
    private let state: Mutex<ViewState>
    private let metrics: GatewayMetrics

    init(key: ViewKey, query: QueryParams, metrics: GatewayMetrics) {
        self.key = key
        self.filteringQuery = query.loadsAllData ? nil : QueryBox(query)
        self.metrics = metrics
        state = Mutex(ViewState())
    }

    /// Takes the location's value from `snapshot` unless the view already serves; on the sequencer, so no record
    /// falls between the value and the first push.
    func loadIfNeeded(from snapshot: StoreSnapshot) {
        state.withLock { state in
            guard !state.isLoaded else { return }
            state.start(with: snapshot.root.descendant(at: key.path), query: filteringQuery?.query ?? .all)
        }
    }

    /// Applies a change record (on the sequencer); its push goes to the subscribers' loops with the task's other
    /// pushes (`deliveries`). A view not loaded yet will take its value after the record.
    func receive(_ record: ChangeRecord, into deliveries: DeliveryBatch) {
        state.withLock { state in
            guard state.isLoaded else { return }
            // Only polled (a console on a busy namespace): no work per change; the next poll loads the data.
            guard !state.onlyPolled else { return state.unload() }
            publish(record, state: &state, into: deliveries)
        }
    }

    private func publish(_ record: ChangeRecord, state: inout ViewState, into deliveries: DeliveryBatch) {
        guard let content = state.apply(record.changes, updateBase: record.updateBase, at: key.path) else { return }
        state.sequence += 1
        guard state.subscriberCount > 0 else { return }
        let frames = PushFrames(content, formats: state.formats, at: key.path, sequence: state.sequence)
        metrics.pushesEncoded.increment(by: frames.encodedCount)
        let sharedAcrossLoops = state.groups.count > 1
        for group in state.groups where !group.subscriptions.isEmpty {
            let subscriptions = group.subscriptions
            let metrics = self.metrics
            deliveries.add(group.loop) {
                let delivered = frames.deliver(to: subscriptions, copyingPerLoop: sharedAcrossLoops)
                // No flush here: the loop flushes once it ran the task's whole batch, so the pushes of one task
                // leave in one `writev` per connection.
                metrics.countDeliveries(delivered)
            }
        }
    }

    // MARK: - Subscribers

    /// Adds a listen (on the sequencer, once loaded); its initial data and `ok` go out to its loop.
    func subscribe(_ subscription: Subscription, request: InitialRequest) {
        state.withLock { state in
            state.add(subscription)
            sendInitial(state: state, request: request)
        }
    }

    /// Removes a listen (on the sequencer).
    func unsubscribe(_ subscription: Subscription) {
        state.withLock { state in state.remove(subscription) }
    }

    /// The view's current data and sequence, `nil` while loading (for a subscriber that fell behind).
    func latest() -> (data: Node, sequence: UInt64)? {
        state.withLock { state in
            state.isLoaded ? (state.result, state.sequence) : nil
        }
    }

    private func sendInitial(state: ViewState, request: InitialRequest) {
        let subscription = request.subscription
        let data = state.result
        let sequence = state.sequence
        subscription.loop.execute {
            subscription.subscriber.deliverInitial(data, sequence: sequence, request: request)
            subscription.loop.flushPending()
        }
    }
}

/// What a listen asked for: the request to answer and the hash of the data the client already holds.
struct InitialRequest: Sendable {
    let subscription: Subscription
    let requestNumber: Int
    let hash: String?
    /// Warnings for the `ok` (`no_index`).
    let warnings: [String]
}
