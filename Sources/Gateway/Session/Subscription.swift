import DataModel
import Transport

/// One listen of one connection (wire session or event stream) on a shared ``View``.
///
/// Immutable facts plus three groups of mutable state with different owners: ``slot`` belongs to the view's lock,
/// ``isRegistered`` to the namespace's sequencer, everything else to the connection's event loop.
final class Subscription: @unchecked Sendable {
    /// The listening connection.
    let subscriber: any ViewSubscriber
    /// The shared view.
    let view: View
    /// How pushes are encoded for it.
    let format: DeliveryFormat
    /// The listened location.
    let path: Path
    /// The query for read rules (`nil` for a default listen), by reference (see ``QueryBox``).
    private let filterBox: QueryBox?
    /// The query object exactly as the client sent it, for a revocation (`c`).
    let queryObject: JSONValue?
    /// The connection's event loop.
    let loop: EventLoop
    /// The connection takes the view's latest data now and then (`coalesce=MS`) instead of each push: the view
    /// then neither encodes nor hands it anything.
    let pollsLatest: Bool

    /// Position in the view's subscriber list (guarded by the view's lock).
    var slot = 0
    /// Whether the view holds the listen and counts it (owned by the namespace's sequencer).
    var isRegistered = false

    // Owned by `loop`:
    /// Cleared when the listen ends; pushes still in flight are then dropped.
    var isActive = true
    /// The view sequence the connection's copy is complete up to; older pushes are skipped.
    var deliveredThrough: UInt64 = 0
    /// Set while the connection is too far behind: pushes are dropped until it drains and gets the latest data.
    var isConflated = false

    init(subscriber: any ViewSubscriber, view: View, format: DeliveryFormat, path: Path, filter: QueryParams?,
         queryObject: JSONValue?, loop: EventLoop, pollsLatest: Bool = false)
    {
        self.pollsLatest = pollsLatest
        self.subscriber = subscriber
        self.view = view
        self.format = format
        self.path = path
        self.filterBox = filter.map(QueryBox.init)
        self.queryObject = queryObject
        self.loop = loop
    }
}

extension Subscription {
    /// The query for read rules (`nil` for a default listen).
    var filter: QueryParams? { filterBox?.query }

    /// The client's tag of a wire listen on a query, `nil` for a default listen or an event stream.
    var tag: Int? {
        if case .wire(let tag) = format { return tag }
        return nil
    }
}
