import HTTP1
import Synchronization
import Transport

/// The answer still owed to a request routed as ``Route/deferred(_:)``.
///
/// Complete it exactly once, from any thread, with a response or a stream: it is handed to the connection's loop
/// and sent in request order. Completing it after the peer went away does nothing; later completions are ignored.
public final class PendingResponse: Sendable {
    private let owner: Mutex<ServerConnection?>
    /// The request's number on its connection (``OwedAnswers``).
    private let number: UInt64
    /// The loop of the connection that waits for the answer.
    public let loop: EventLoop

    init(owner: ServerConnection, number: UInt64) {
        self.owner = Mutex(owner)
        self.number = number
        self.loop = owner.connection.loop
    }

    /// Sends `response` on the connection's loop.
    public func respond(_ response: HTTPResponse) {
        guard let connection = owner.withLock({ owner in defer { owner = nil }; return owner }) else { return }
        let number = self.number
        // The loop flushes at the end of its pass, so answers completed together leave in one write.
        loop.execute { connection.complete(number, with: .response(response)) }
    }

    /// Answers with a streaming response instead (as ``Route/stream(head:start:)`` would have): `head` is sent on
    /// the connection's loop, then `start` runs there with the stream.
    public func startStream(head: HTTPResponseHead, start: @escaping @Sendable (ResponseStream) -> Void) {
        guard let connection = owner.withLock({ owner in defer { owner = nil }; return owner }) else { return }
        let number = self.number
        loop.execute { connection.complete(number, with: .stream(head, start: start)) }
    }
}
