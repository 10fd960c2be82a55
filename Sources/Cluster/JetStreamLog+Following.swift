import CNats
import Dispatch
import Store
import Synchronization

/// Following: a consumer from the requested position, whose deliveries reach the replica only through the log's
/// ``LeaderGate`` (only what the stream's leader holds, in its order). The log makes a new consumer from the last
/// position delivered whenever the current one fails: nats.c reports missed heartbeats or messages the subscription
/// never got, the consumer's own count of its messages skips one, or it cannot be made (after
/// ``refollowDelaySeconds``). A consumer found elsewhere than on the leader is replaced the same way, until one lives
/// on the leader. A leader whose copy contradicts what the replica applied is asked to step down; when a second
/// leader contradicts it too, the replica rebuilds (``watchDivergence(_:)``).
extension JetStreamLog {
    /// How long to wait before making another consumer when the last one could not be made, or the servers could
    /// not say where it lives (one placed off the stream's leader is replaced at once).
    static let refollowDelaySeconds = 0.2
    /// How long to wait for JetStream to make a consumer, at first and at most. One is made in milliseconds while
    /// the servers are up. While one is down or stalled but not yet known to be, JetStream may place the consumer
    /// there and never answer: a short wait lets the log try again, likely elsewhere. Each wait that runs out
    /// doubles the next (a slow link or a busy server gets the time it needs); a consumer made resets it.
    static let consumerAnswerMillis: ClosedRange<Int64> = 250...2000
    /// How long to wait, after asking a leader whose copy contradicts the replica to step down, before following again.
    static let contradictedRetrySeconds = 1.0

    public func follow(after position: UInt64, deliver: @escaping @Sendable (UInt64, [UInt8]) -> Void) {
        self.deliver.withLock { $0 = deliver }
        gate.restart(after: position)
        let generation = following.withLock { progress in
            progress.delivered = position
            progress.lastDelivery = Self.now()
            progress.generation += 1
            progress.isHalted = false
            progress.consumerDelivered = 0
            return progress.generation
        }
        let wait = following.withLock { $0.consumerWaitMillis }
        if let earlier = handles.withLock({ handles in
            defer { handles.subscription = nil }
            return handles.subscription
        }) {
            retire(earlier)
        }
        guard let context = openContext() else { return }
        var created: OpaquePointer?
        let closure = Unmanaged.passRetained(FollowContext(log: self, generation: generation)).toOpaque()
        handles.withLock { $0.followContexts.append(closure) }
        let status = canopy_js_follow(&created, context, stream, subject, position + 1,
                                      wait, { _, _, message, closure in
            guard let closure, let message else { return }
            let following = Unmanaged<FollowContext>.fromOpaque(closure).takeUnretainedValue()
            var consumer = [CChar](repeating: 0, count: 256)
            var consumerSequence: UInt64 = 0
            let sequence = canopy_js_delivery(message, &consumer, Int32(consumer.count), &consumerSequence)
            let id = String(cString: canopy_msg_id(message))
            let count = Int(natsMsg_GetDataLength(message))
            let payload = natsMsg_GetData(message).map { [UInt8](UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
            natsMsg_Destroy(message)
            guard sequence > 0, let log = following.log else { return }
            let delivery = Delivery(position: sequence, id: id, consumer: JetStreamLog.text(consumer),
                                    consumerSequence: consumerSequence, payload: payload)
            log.delivered(delivery, generation: following.generation)
        }, closure)
        following.withLock { progress in
            let limits = Self.consumerAnswerMillis
            progress.consumerWaitMillis = status == NATS_TIMEOUT
                ? min(limits.upperBound, progress.consumerWaitMillis * 2) : limits.lowerBound
        }
        guard status == NATS_OK, let created else {
            // No consumer (no server reachable, no stream leader yet): try again while this following is current.
            return remake(generation, after: position, delay: Self.refollowDelaySeconds)
        }
        cluster.events.watch(created) { [weak self] status in self?.consumerFailed(status, generation: generation) }
        let current = handles.withLock { handles in
            guard following.withLock({ $0.generation == generation }) else { return false }
            handles.subscription = created
            return true
        }
        if !current { retire(created) }  // a newer following started meanwhile
    }

    /// Ends a following's subscription off the caller's thread: unsubscribing deletes its consumer, which waits for
    /// JetStream's metadata leader (up to the context's 3 s while none answers, as after a stall), and a new
    /// following must not wait for that. Its deliveries are dropped meanwhile (an earlier generation's).
    private func retire(_ subscription: OpaquePointer) {
        cluster.events.unwatch(subscription)
        let retired = UInt(bitPattern: subscription)  // nats.c's subscriptions are thread-safe
        retiredSubscriptions.async {
            guard let subscription = OpaquePointer(bitPattern: retired) else { return }
            natsSubscription_Unsubscribe(subscription)
            natsSubscription_Destroy(subscription)
        }
    }

    public func watchDivergence(_ diverged: @escaping @Sendable () -> Void) {
        divergence.withLock { $0 = diverged }
    }

    /// nats.c reports that the consumer of following `generation` failed (on nats.c's thread): it missed two
    /// heartbeats (its server died, stalled or was cut off), a heartbeat showed messages the subscription never got,
    /// or the subscription dropped messages it could not hold.
    private func consumerFailed(_ status: natsStatus, generation: UInt64) {
        switch status {
        case NATS_MISSED_HEARTBEAT, NATS_MISMATCH, NATS_SLOW_CONSUMER:
            remake(generation, after: nil, delay: 0)
        default:
            break
        }
    }

    /// Ends following `generation` (unless it already ended) and follows again after `delay` from `after`, or from
    /// the last position delivered then; nothing when another following started meanwhile.
    private func remake(_ generation: UInt64, after: UInt64?, delay: Double) {
        guard halt(generation), let deliver = deliver.withLock({ $0 }) else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self,
                let from = following.withLock({ $0.generation == generation ? after ?? $0.delivered : nil })
            else { return }
            follow(after: from, deliver: deliver)
        }
    }

    /// The consumer of following `generation` delivered (on nats.c's thread, which the gate's questions may hold).
    /// Its own count of its messages must go up by one each time: a message the subscription lost (a gap here,
    /// whereas a gap in the stream's positions is entries removed below a snapshot, for the replica to handle)
    /// makes a new consumer.
    private func delivered(_ delivery: Delivery, generation: UInt64) {
        let inOrder: Bool? = following.withLock { progress in
            guard progress.generation == generation, !progress.isHalted else { return nil }
            guard delivery.consumerSequence == progress.consumerDelivered + 1 else { return false }
            progress.consumerDelivered = delivery.consumerSequence
            return true
        }
        guard let inOrder else { return }
        guard inOrder else {
            return remake(generation, after: nil, delay: 0)
        }
        let verdict = gate.admit(position: delivery.position, id: delivery.id, consumer: delivery.consumer,
                                 asking: gateQuestions())
        switch verdict {
        case .pass:
            following.withLock { progress in
                progress.delivered = max(progress.delivered, delivery.position)
                progress.lastDelivery = Self.now()
            }
            deliver.withLock { $0 }?(delivery.position, delivery.payload)
        case .followAgain(let after):
            remake(generation, after: after, delay: Self.refollowDelaySeconds)
        case .placedOffLeader(let after):
            remake(generation, after: after, delay: 0)
        case .leaderContradicts(_, let after):
            // Its copy went wrong while it followed (docs/reliability.md): let another server lead, then check again.
            guard halt(generation), let deliver = deliver.withLock({ $0 }) else { return }
            DispatchQueue.global().async { [weak self] in
                guard let self else { return }
                _ = canopy_js_stream_stepdown(cluster.connection, stream)
                DispatchQueue.global().asyncAfter(deadline: .now() + Self.contradictedRetrySeconds) { [weak self] in
                    guard let self, following.withLock({ $0.generation == generation }) else { return }
                    follow(after: after, deliver: deliver)
                }
            }
        case .diverged:
            guard halt(generation) else { return }
            // The replica rebuilds from the log and follows again; without one to tell, at least follow the leader.
            if let diverged = divergence.withLock({ $0 }) {
                DispatchQueue.global().async { diverged() }
            } else if let deliver = deliver.withLock({ $0 }) {
                let after = following.withLock { $0.delivered }
                DispatchQueue.global().async { [self] in follow(after: after, deliver: deliver) }
            }
        }
    }

    /// Stops letting following `generation`'s deliveries through; false when it is no longer the current one.
    private func halt(_ generation: UInt64) -> Bool {
        following.withLock { progress in
            guard progress.generation == generation, !progress.isHalted else { return false }
            progress.isHalted = true
            return true
        }
    }

    /// The gate's questions, asked of the servers (nats.c waits up to the context's 3 s for each answer).
    private func gateQuestions() -> LeaderGate.Questions {
        let stream = stream
        return LeaderGate.Questions(
            consumerHost: { [weak self] consumer in
                guard let context = self?.openContext() else { return nil }
                var host = [CChar](repeating: 0, count: 256)
                let status = canopy_js_consumer_host(context, stream, consumer, &host, Int32(host.count))
                return status == NATS_OK ? Self.text(host) : nil
            },
            streamLeader: { [weak self] in
                guard let context = self?.openContext() else { return nil }
                var leader = [CChar](repeating: 0, count: 256)
                let status = canopy_js_stream_leader(context, stream, &leader, Int32(leader.count))
                return status == NATS_OK ? Self.text(leader) : nil
            },
            message: { [weak self] position in
                guard let context = self?.openContext() else { return nil }
                var id = [CChar](repeating: 0, count: 256)
                switch canopy_js_message_id(context, stream, position, &id, Int32(id.count)) {
                case NATS_OK: return .id(Self.text(id))
                case NATS_NOT_FOUND:
                    var last: UInt64 = 0
                    guard canopy_js_last_sequence(context, stream, &last) == NATS_OK else { return nil }
                    return position > last ? .beyondEnd : .removed
                default: return nil
                }
            },
            now: { Self.now() })
    }

    /// Hears JetStream's advisory for each new leader of the stream. A new leader may not hold what the last one
    /// did not acknowledge, and the current consumer may live on a server that stalled or died; waiting for the
    /// retry timer and for missed heartbeats cost seconds after each election. So on each advisory the log publishes
    /// again every append not acknowledged yet and makes a new consumer from the last position delivered (which the
    /// gate then checks against the new leader). The timers stay for an advisory lost on the way.
    func listenForLeaderElections() {
        let subject = "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.\(stream)"
        let subscription = MessageListener.subscribe(cluster.connection, subject) { [weak self] _ in
            guard let self else { return }
            // Publishing may wait for room among the publishes in flight: not on nats.c's delivery thread.
            DispatchQueue.global().async { self.leaderElected() }
        }
        if let subscription { handles.withLock { $0.listeners.append(subscription) } }
    }

    /// A new leader of the stream was elected.
    private func leaderElected() {
        retryOverdue(all: true)
        let current = following.withLock { progress in
            // Waits that ran out while no server led are no sign of a slow link.
            progress.consumerWaitMillis = Self.consumerAnswerMillis.lowerBound
            return progress.isHalted ? nil : progress.generation
        }
        if let current { remake(current, after: nil, delay: 0) }
    }

    /// The text nats.c wrote into `buffer` (up to its terminating zero).
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The stream is known to hold `head` (a publish acknowledged there, a checkpoint, a reader's question).
    func learned(head: UInt64) {
        following.withLock { $0.knownHead = max($0.knownHead, head) }
    }

    /// Follows again from the last position delivered when the stream holds more and the consumer has delivered
    /// nothing for ``followStallSeconds`` (nats.c's thread-safe calls may wait on the servers: off the timer).
    func followAgainIfStalled() {
        let now = Self.now()
        let stalled: UInt64? = following.withLock { progress in
            guard !progress.isHalted, progress.knownHead > progress.delivered,
                now - progress.lastDelivery >= Self.followStallSeconds
            else { return nil }
            return progress.generation
        }
        if let stalled { remake(stalled, after: nil, delay: 0) }
    }
}

/// One message a consumer delivered.
private struct Delivery {
    let position: UInt64
    /// Its `Nats-Msg-Id`.
    let id: String
    /// The consumer that delivered it.
    let consumer: String
    /// The consumer's count of the messages it delivered, this one included.
    let consumerSequence: UInt64
    let payload: [UInt8]
}

/// What a subscription made to follow passes to nats.c as its closure: the log, and which following it belongs to
/// (deliveries of an earlier following are dropped).
final class FollowContext: @unchecked Sendable {
    weak var log: JetStreamLog?
    let generation: UInt64

    init(log: JetStreamLog, generation: UInt64) {
        self.log = log
        self.generation = generation
    }
}

/// How far a log's consumer got, and what the stream is known to hold beyond it.
struct FollowProgress {
    /// The last position delivered (or the one following started after).
    var delivered: UInt64 = 0
    /// When the consumer last delivered (or following started), in seconds of uptime.
    var lastDelivery = 0.0
    /// The highest position the stream is known to hold.
    var knownHead: UInt64 = 0
    /// How many messages the current following's consumer delivered.
    var consumerDelivered: UInt64 = 0
    /// How long the next consumer's making may wait for JetStream's answer (``JetStreamLog/consumerAnswerMillis``).
    var consumerWaitMillis = JetStreamLog.consumerAnswerMillis.lowerBound
    /// Counts followings; only the current one's deliveries are let through.
    var generation: UInt64 = 0
    /// The current following's consumer failed, was found off the leader, or its entries differ: nothing more of
    /// it passes (a new following is on its way).
    var isHalted = false
}

