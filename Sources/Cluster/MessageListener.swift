import CNats
import Dispatch

/// What a core NATS subscription of a log calls with each message's data (retained for the subscription's life and
/// passed to nats.c as its closure).
final class MessageListener: Sendable {
    let received: @Sendable (_ data: [UInt8]) -> Void

    private init(_ received: @escaping @Sendable (_ data: [UInt8]) -> Void) {
        self.received = received
    }

    /// A subscription and the listener it calls, until ``end()``.
    struct Subscription: @unchecked Sendable {  // nats.c's subscriptions are thread-safe
        let subscription: OpaquePointer
        let listener: UnsafeMutableRawPointer

        /// Unsubscribes; destroys the subscription and releases the listener a while later, as a consumer's
        /// subscription is (``JetStreamLog/destroyLater(_:)``: nats.c 3.4.1's read loop may still be handing it a
        /// message).
        func end() {
            natsSubscription_Unsubscribe(subscription)
            DispatchQueue.global().asyncAfter(deadline: .now() + JetStreamLog.destroyDelaySeconds) { [self] in
                natsSubscription_Destroy(subscription)
                Unmanaged<MessageListener>.fromOpaque(listener).release()
            }
        }
    }

    /// Subscribes `connection` to `subject`; `received` hears each message's data on nats.c's thread. `nil` when
    /// nats.c refuses the subscription.
    static func subscribe(_ connection: OpaquePointer, _ subject: String,
                          _ received: @escaping @Sendable (_ data: [UInt8]) -> Void) -> Subscription? {
        let listener = Unmanaged.passRetained(MessageListener(received)).toOpaque()
        var created: OpaquePointer?
        let status = natsConnection_Subscribe(&created, connection, subject, { _, _, message, closure in
            guard let closure, let message else { return }
            let count = Int(natsMsg_GetDataLength(message))
            let data = natsMsg_GetData(message).map { [UInt8](UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
            natsMsg_Destroy(message)
            Unmanaged<MessageListener>.fromOpaque(closure).takeUnretainedValue().received(data)
        }, listener)
        guard status == NATS_OK, let created else {
            Unmanaged<MessageListener>.fromOpaque(listener).release()
            return nil
        }
        return Subscription(subscription: created, listener: listener)
    }
}
