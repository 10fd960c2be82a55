import DataModel
import Primitives

/// What receives a view's pushes for its listens: a wire-protocol session or a REST event stream.
///
/// Both methods are called on the subscription's loop.
protocol ViewSubscriber: AnyObject, Sendable {
    /// The view's data when the listen starts (or `.empty` when it ended before the view loaded).
    func deliverInitial(_ data: Node, sequence: UInt64, request: InitialRequest)
    /// One push, already encoded for the subscription's ``DeliveryFormat`` (borrowed: the transport copies a
    /// small one and retains only a large one); returns whether it was sent.
    func deliver(_ push: ByteChunk, sequence: UInt64, to subscription: Subscription) -> Bool
}

/// How a listen receives a view's pushes; each distinct format of a view's listens is encoded once per push.
enum DeliveryFormat: Hashable, Sendable {
    /// Wire-protocol WebSocket frames with the listen's tag (`nil`: a default listen).
    case wire(tag: Int?)
    /// Server-sent events as HTTP chunks, paths relative to the view's location (rest-api.md §9).
    case eventStream
}
