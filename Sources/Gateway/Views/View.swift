import CoreMetrics
import DataModel
import Store
import Synchronization
import Transport

/// One shared view: a location and a query, the listens on it, and the data they hold.
///
/// A view turns each change record into one push, encodes it once per distinct tag or format (``PushFrames``), and hands
/// the same bytes to every subscribed connection, one task per event loop. All state sits behind one mutex; the
/// hand-offs happen under it, so every subscriber sees the pushes of a view in the order the writes were applied.
///
/// - A view at or below the shard depth takes records only from its owning shard (a multi-shard write is reported
///   by every participant; the owner's report is the one that counts).
/// - A wide view (shallower than the shard depth) takes records from every shard and merges them with
///   ``ShardMerge``, which applies a multi-shard write once, when every participant has reached it.
final class View: @unchecked Sendable {
    /// The location and query identity.
    let key: ViewKey
    /// The view's query when it filters; `nil` for a default listen (most views: no 114-byte copy each).
    private let filteringQuery: QueryBox?
    /// The shard owning the location, `nil` for a wide location.
    let owner: Int?
    /// Listens counted by the registry; guarded by the registry's lock.
    var references = 0
    private let state: Mutex<ViewState>
    private let metrics: GatewayMetrics

    init(key: ViewKey, query: QueryParams, owner: Int?, shardCount: Int, metrics: GatewayMetrics) {
        self.key = key
        self.filteringQuery = query.loadsAllData ? nil : QueryBox(query)
        self.owner = owner
        self.metrics = metrics
        state = Mutex(ViewState(merge: owner == nil ? ShardMerge(shardCount: shardCount) : nil))
    }

    // MARK: - Loading

    /// Reads the location's value atomically with the change stream and starts serving.
    func load(from store: Store) {
        guard owner == nil else {
            // One shard: the value is taken and the view goes live in one task on the shard's queue, so no record
            // falls between the two.
            store.withConsistentValue(at: key.path, onShard: nil) { [self] node in finishLoading(node) }
            return
        }
        store.withConsistentValue(at: key.path, onShard: { [self] shard in
            state.withLock { $0.merge?.accept(shard) }
        }, completion: { [self] node in finishLoading(node) })
    }

    private func finishLoading(_ node: Node) {
        state.withLock { state in
            state.start(with: node, query: filteringQuery?.query ?? .all)
            for waiting in state.waiting { sendInitial(state: state, request: waiting) }
            state.waiting.removeAll()
            if state.merge != nil { drainMerge(&state) }
        }
    }

    // MARK: - Change records

    /// Applies a change record reported by a shard (on that shard's queue).
    func receive(_ record: ChangeRecord) {
        state.withLock { state in
            guard let owner else {
                guard state.merge?.enqueue(record) == true, state.isLoaded else { return }
                drainMerge(&state)
                return
            }
            guard record.shard == owner, state.isLoaded else { return }
            publish(record, state: &state)
        }
    }

    private func drainMerge(_ state: inout ViewState) {
        while let record = state.merge?.nextReady() { publish(record, state: &state) }
    }

    private func publish(_ record: ChangeRecord, state: inout ViewState) {
        guard let content = state.apply(record.changes, updateBase: record.updateBase, at: key.path) else { return }
        state.sequence += 1
        guard state.subscriberCount > 0 else { return }
        let frames = PushFrames(content, formats: state.formats, at: key.path, sequence: state.sequence)
        metrics.pushesEncoded.increment(by: frames.encodedCount)
        for group in state.groups where !group.subscriptions.isEmpty {
            let subscriptions = group.subscriptions
            let loop = group.loop
            let metrics = self.metrics
            loop.execute {
                var delivered = 0
                guard let first = subscriptions.first else { return }
                var format = first.format
                var formatFrames = frames.frames(for: format)
                let sequence = frames.sequence
                for subscription in subscriptions {
                    if subscription.format != format {
                        format = subscription.format
                        formatFrames = frames.frames(for: format)
                    }
                    if subscription.subscriber.deliver(formatFrames, sequence: sequence, to: subscription) {
                        delivered += 1
                    }
                }
                // No flush here: the loop flushes at the end of its pass, so pushes of writes that queued up
                // behind each other leave in one `writev` per connection.
                metrics.pushesDelivered.increment(by: delivered)
            }
        }
    }

    // MARK: - Subscribers

    /// Adds a listen; its initial data and `ok` go out once the view is loaded.
    func subscribe(_ subscription: Subscription, request: InitialRequest) {
        state.withLock { state in
            state.add(subscription)
            if state.isLoaded {
                sendInitial(state: state, request: request)
            } else {
                state.waiting.append(request)
            }
        }
    }

    /// Removes a listen. A listen still waiting for the view to load is answered `ok` without data.
    func unsubscribe(_ subscription: Subscription) {
        state.withLock { state in
            guard let waiting = state.remove(subscription) else { return }
            subscription.loop.execute {
                subscription.subscriber.deliverInitial(.empty, sequence: 0, request: waiting)
            }
        }
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
