import DataModel
import Transport

/// One listen of one connection (wire session or event stream) on a shared ``View``.
///
/// Immutable facts plus three groups of mutable state with different owners: ``slot`` belongs to the view's lock,
/// ``isRegistered`` to the namespace's sequencer, everything else to the connection's event loop. The stored
/// properties are ordered by size so that they pack without padding: every idle listen pays for each byte here.
final class Subscription: @unchecked Sendable {
    /// The listening connection.
    let subscriber: any ViewSubscriber
    /// The shared view.
    let view: View
    /// The query of a listen on one (`nil` for a default listen), by reference: most listens have none.
    private let query: ListenQuery?
    /// The connection's event loop.
    let loop: EventLoop
    /// Position in the view's subscriber list (guarded by the view's lock).
    var slot = 0
    /// The view sequence the connection's copy is complete up to; older pushes are skipped (owned by `loop`).
    var deliveredThrough: UInt64 = 0
    /// How pushes are encoded for it.
    let format: DeliveryFormat
    /// The connection takes the view's latest data now and then (`coalesce=MS`) instead of each push: the view
    /// then neither encodes nor hands it anything.
    let pollsLatest: Bool
    /// Whether the view holds the listen and counts it (owned by the namespace's sequencer).
    var isRegistered = false

    // Owned by `loop`:
    /// Cleared when the listen ends; pushes still in flight are then dropped.
    var isActive = true
    /// Set while the connection is too far behind: pushes are dropped until it drains and gets the latest data.
    var isConflated = false

    init(subscriber: any ViewSubscriber, view: View, format: DeliveryFormat, filter: QueryParams?,
         queryObject: JSONValue?, loop: EventLoop, pollsLatest: Bool = false)
    {
        self.pollsLatest = pollsLatest
        self.subscriber = subscriber
        self.view = view
        self.format = format
        self.query = filter == nil && queryObject == nil ? nil : ListenQuery(filter: filter, object: queryObject)
        self.loop = loop
    }
}

extension Subscription {
    /// The listened location: its view's (one copy for every listen on the view).
    var path: Path { view.key.path }

    /// The query for read rules (`nil` for a default listen).
    var filter: QueryParams? { query?.filter }

    /// The query object exactly as the client sent it, for a revocation (`c`).
    var queryObject: JSONValue? { query?.object }

    /// The client's tag of a wire listen on a query, `nil` for a default listen or an event stream.
    var tag: Int? {
        if case .wire(let tag) = format { return tag }
        return nil
    }
}

/// A listen's query: what read rules see, and the object the client sent.
private final class ListenQuery: Sendable {
    let filter: QueryParams?
    let object: JSONValue?

    init(filter: QueryParams?, object: JSONValue?) {
        self.filter = filter
        self.object = object
    }
}
