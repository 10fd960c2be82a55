import Dispatch
import HTTP1
import HTTPServer
import Synchronization

/// Routes for the deferred-answer tests; every answer's body is the request's `id` parameter.
///
/// - `/now`: answered at once (`.respond`).
/// - `/later?delay=<ms>`: deferred, completed after `delay` ms on a global queue.
/// - `/inline`: deferred, completed before the route returns (on the connection's loop).
/// - `/hold`: deferred, kept until the test completes it (``held(_:)``).
/// - `/twice`: deferred, completed twice in a row (bodies `first`, then `second`).
/// - `/race`: deferred, completed at the same time from two threads (bodies `one` and `two`).
/// - `/ordered?order=<name>`: placed in that order (`.ordered`), kept until the test completes it (``held(_:)``).
/// - `/ahead`: answered at once with the order the request found ahead of it (``RequestContext/unansweredAhead``),
///   `-` for none.
/// - `/.table`: the same, through a ``RouteTable``, whose handlers are never pipelined.
/// - `/big?size=<bytes>`: answered at once with a body of that many bytes.
final class DeferredTestRouter: Router {
    private let pending = Mutex<[String: PendingResponse]>([:])
    private let routed = Mutex<[String]>([])
    private static let table: RouteTable<Void> = {
        var table = RouteTable<Void>()
        table.add(.exact("/.table")) { _, _, context in .respond(answer(context.unansweredAhead?.name ?? "-")) }
        table.add(.prefix("/.other/")) { _, _, _ in .respond(answer("other")) }
        return table
    }()

    func route(_ request: HTTPRequest, context: RequestContext) -> Route {
        let id = Self.parameter("id", in: request.head.query) ?? ""
        routed.withLock { $0.append(id) }
        if let route = Self.table.route(request, context: context, owner: ()) { return route }
        switch request.head.path {
        case "/ordered":
            let order = PipelineOrder(Self.parameter("order", in: request.head.query) ?? "")
            return .ordered(order) { [self] pending in self.pending.withLock { $0[id] = pending } }
        case "/big":
            let size = Int(Self.parameter("size", in: request.head.query) ?? "") ?? 0
            return .respond(HTTPResponse(status: .ok, headers: HTTPHeaders(), body: [UInt8](repeating: 0x61, count: size)))
        case "/ahead":
            return .respond(Self.answer(context.unansweredAhead?.name ?? "-"))
        case "/now":
            return .respond(Self.answer(id))
        case "/later":
            let delay = Int(Self.parameter("delay", in: request.head.query) ?? "") ?? 0
            return .deferred { pending in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(delay)) {
                    pending.respond(Self.answer(id))
                }
            }
        case "/inline":
            return .deferred { pending in pending.respond(Self.answer(id)) }
        case "/hold":
            return .deferred { [self] pending in self.pending.withLock { $0[id] = pending } }
        case "/twice":
            return .deferred { pending in
                pending.respond(Self.answer("first"))
                pending.respond(Self.answer("second"))
            }
        case "/race":
            return .deferred { pending in
                let start = DispatchGroup()
                start.enter()
                for body in ["one", "two"] {
                    DispatchQueue.global().async {
                        start.wait()
                        pending.respond(Self.answer(body))
                    }
                }
                start.leave()
            }
        default:
            return .respond(.error(.notFound, message: "not found"))
        }
    }

    /// The ids of the requests routed so far, in order.
    var routedIDs: [String] { routed.withLock { $0 } }

    /// Whether request `id`'s answer is held now (its route started), without waiting.
    func isHeld(_ id: String) -> Bool {
        pending.withLock { $0[id] != nil }
    }

    /// The held answer of request `id`, once routed (waits up to 10 s), removed from the router.
    func held(_ id: String) -> PendingResponse? {
        for _ in 0..<1000 {
            if let found = pending.withLock({ $0.removeValue(forKey: id) }) { return found }
            sleepMilliseconds(10)
        }
        return nil
    }

    static func answer(_ body: String) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain")
        return HTTPResponse(status: .ok, headers: headers, body: Array(body.utf8))
    }

    private static func parameter(_ name: String, in query: String?) -> String? {
        for pair in (query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.first.map(String.init) == name { return parts.count > 1 ? String(parts[1]) : "" }
        }
        return nil
    }
}

/// Blocks the calling (test) thread for `milliseconds`.
func sleepMilliseconds(_ milliseconds: Int) {
    let semaphore = DispatchSemaphore(value: 0)
    _ = semaphore.wait(timeout: .now() + .milliseconds(milliseconds))
}

/// Polls `condition` every 10 ms for up to 10 s; whether it became true.
func eventually(_ condition: () -> Bool) -> Bool {
    for _ in 0..<1000 {
        if condition() { return true }
        sleepMilliseconds(10)
    }
    return condition()
}
