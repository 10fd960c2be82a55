import HTTP1

/// The answers one connection still owes, in request order: pipelined requests may be answered in any order inside
/// the server, and leave in the order they arrived (RFC 9112 §9.3.2). Owned by the connection's loop.
struct OwedAnswers {
    /// How an owed request is answered, once it is.
    enum Answer {
        case response(HTTPResponse)
        case stream(HTTPResponseHead, start: @Sendable (ResponseStream) -> Void)
    }

    /// Where an owed request's effect was placed when it was routed.
    enum Placement {
        /// It has none: its answer was decided from the request alone.
        case none
        /// In this order (``Route/ordered(_:_:)``): requests behind it may be routed into the same order.
        case order(PipelineOrder)
        /// Where its route put it, known to no order: requests behind it wait until it is answered.
        case unordered
    }

    /// How a request wants its answer.
    struct Manner {
        /// Whether the connection stays open after the answer.
        let keepAlive: Bool
        /// Whether the request was a `HEAD` (its answer goes without the body).
        let isHead: Bool
    }

    private struct Slot {
        let manner: Manner
        let blocksFollowers: Bool
        var answer: Answer?
        /// The body bytes of its answer while held behind an earlier one (counted in ``heldBytes``).
        var heldBytes = 0
    }

    /// The most requests one connection may have routed and unanswered: beyond, the rest wait in the parser.
    static let limit = 64

    private var slots: [Slot] = []
    /// The index in ``slots`` of the oldest owed request.
    private var head = 0
    /// The number of the oldest owed request (requests are numbered from 0 in arrival order).
    private var headNumber: UInt64 = 0
    /// The order the owed requests with an effect were placed in (see ``mayRouteBehind``).
    private(set) var orderAhead: PipelineOrder?
    /// How many owed requests were placed in no order.
    private var unordered = 0
    /// The body bytes of answers given and held behind an earlier one still owed.
    private(set) var heldBytes = 0

    /// A routed request that starts only once nothing is owed (it is not ordered behind what is).
    var held: HeldRoute?
    /// Whether a `100 Continue` waits for the answers owed ahead of it.
    var continueOwed = false

    var isEmpty: Bool { head == slots.count }
    private var count: Int { slots.count - head }

    /// Whether the next request may be routed now: nothing is owed, or everything owed with an effect was placed in
    /// ``orderAhead`` (which the request is then routed behind), the limit is not reached, and the answers held
    /// behind an earlier one come to less than `heldLimit` bytes (a client that pipelines large reads behind a slow
    /// write cannot make the server hold much for it).
    func mayRouteBehind(heldLimit: Int) -> Bool {
        isEmpty || (unordered == 0 && count < Self.limit && heldBytes < heldLimit)
    }

    /// Owes an answer to the next request; returns its number. A request placed in an order may join only the
    /// order ahead (the caller holds any other until nothing is owed).
    mutating func owe(_ manner: Manner, placement: Placement) -> UInt64 {
        var blocksFollowers = false
        switch placement {
        case .none: break
        case .order(let order): orderAhead = order
        case .unordered:
            unordered += 1
            blocksFollowers = true
        }
        slots.append(Slot(manner: manner, blocksFollowers: blocksFollowers))
        return headNumber &+ UInt64(count - 1)
    }

    /// Records the answer to request `number`; ignored when it is not owed (answered already).
    mutating func answer(_ number: UInt64, with answer: Answer) {
        guard number >= headNumber, number - headNumber < UInt64(count) else { return }
        let index = head + Int(number - headNumber)
        guard slots[index].answer == nil else { return }
        slots[index].answer = answer
        if index != head, case .response(let response) = answer {
            slots[index].heldBytes = response.body.count
            heldBytes += response.body.count
        }
    }

    /// The oldest owed request's answer, and how it wants it, when it is answered; it is then no longer owed.
    mutating func takeReady() -> (Answer, Manner)? {
        guard !isEmpty, let answer = slots[head].answer else { return nil }
        let slot = slots[head]
        heldBytes -= slot.heldBytes
        head += 1
        headNumber &+= 1
        if slot.blocksFollowers { unordered -= 1 }
        if isEmpty {
            slots.removeAll(keepingCapacity: slots.capacity <= 2 * Self.limit)
            head = 0
            orderAhead = nil
        } else if head >= Self.limit {
            // A client that always keeps requests in flight never empties the list: drop the answered ones.
            slots.removeFirst(head)
            head = 0
        }
        return (answer, slot.manner)
    }
}

/// A routed request waiting for the answers owed ahead of it (``ServerConnection``).
final class HeldRoute {
    let route: Route
    let request: HTTPRequest
    let manner: OwedAnswers.Manner

    init(route: Route, request: HTTPRequest, manner: OwedAnswers.Manner) {
        self.route = route
        self.request = request
        self.manner = manner
    }
}
