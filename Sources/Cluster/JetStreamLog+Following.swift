import CNats
import Dispatch
import Store
import Synchronization

/// Following: consumers from the last position delivered, whose deliveries reach the replica only through the log's
/// ``LeaderGate`` (only what the stream's leader holds, in its order).
///
/// A consumer lives on one server, which JetStream picks at random among the stream's servers, and only one on the
/// leader passes the gate. So the log keeps up to ``maxLiveConsumers`` of them live at once, each an *attempt*:
/// - ``parallelAttempts`` start when JetStream announces a new leader of the stream; one starts when the newest
///   missed its heartbeats, when nothing came for ``followStallSeconds`` while the stream holds more, and at once
///   when one is found off the leader;
/// - one that could not be made is made again, at once after its wait ran out (likely placed on a server that is
///   down), ``refollowDelaySeconds`` later otherwise, until a delivery passes or ``parallelAttempts`` others
///   started meanwhile;
/// - the first attempt whose delivery passes the gate ends every other one;
/// - one found off the leader, or whose own count of its messages skips one, ends.
///
/// An attempt that fails is not ended before another passes: a stalled server that resumes as the stream's leader
/// delivers again through it, while making a new consumer needs JetStream's metadata leader, which such a resume can
/// unseat for seconds (docs/reliability.md). A leader whose copy contradicts what the replica applied is asked to
/// step down; when a second leader contradicts it too, the replica rebuilds (``watchDivergence(_:)``).
extension JetStreamLog {
    /// How long to wait before making another consumer when the last one could not be made, or the servers could
    /// not say where it lives (one placed off the stream's leader is replaced at once).
    static let refollowDelaySeconds = 0.2
    /// How long to wait for JetStream to make a consumer, at first and at most. One is made in milliseconds while
    /// the servers are up. While one is down or stalled but not yet known to be, JetStream may place the consumer
    /// there and never answer: a short wait lets the log try again, likely elsewhere. Each wait that runs out
    /// doubles the next (a slow link or a busy server gets the time it needs); a consumer made resets it.
    static let consumerAnswerMillis: ClosedRange<Int64> = 250...2000
    /// How many consumers are made at once for a new leader of the stream (each lands on its leader with a chance
    /// of one in the number of the stream's servers).
    static let parallelAttempts = 3
    /// How many consumers may follow at once: beyond, the oldest one that did not pass last ends.
    static let maxLiveConsumers = 4
    /// How long to wait, after asking a leader whose copy contradicts the replica to step down, before following again.
    static let contradictedRetrySeconds = 1.0
    /// How long a consumer may send nothing, data or heartbeat (one a second while idle), before another attempt
    /// starts: two heartbeats missed.
    static let silenceSeconds = 2.0
    /// How long following may pass nothing while the stream holds more before it is reported
    /// (``FollowingEvent/stalled``).
    static let stallReportSeconds = 10.0

    public func follow(after position: UInt64, deliver: @escaping @Sendable (UInt64, [UInt8]) -> Void) {
        // Under `admission`, which a delivery that passed holds until handed on: one passed by an earlier following
        // reaches the earlier `deliver`, or finds its attempt ended. Before, one could reach the new `deliver` with
        // a position past the new start, and the replica took it for entries removed below a snapshot.
        let ended = admission.withLock { _ in
            self.deliver.withLock { $0 = deliver }
            gate.restart(after: position)
            // Moved back (a rebuild): what was announced may come from a copy found wrong; withdrawn.
            lastHanded.withLock { if position < $0.position { $0 = (0, "-", false) } }
            return following.withLock { progress in
                progress.delivered = position
                progress.lastDelivery = Self.now()
                progress.isHalted = false
                return progress.endAll()
            }
        }
        for subscription in ended { retire(subscription) }
        startAttempt()
    }

    public func watchDivergence(_ diverged: @escaping @Sendable () -> Void) {
        divergence.withLock { $0 = diverged }
    }

    /// The replica's rebuild from the stream leader's copy was outvoted: that copy went wrong (docs/reliability.md).
    /// The gate passes nothing from that leader from now on while it leads (``LeaderGate/distrustLeader(at:)``),
    /// and it is asked to step down.
    public func distrustSource() {
        gate.distrustLeader(at: Self.now())
        DispatchQueue.global().async { [weak self] in
            guard let self, let leader = gateQuestions().streamLeader() else { return }
            gate.distrusted(leader)
            let stepDown = canopy_js_stream_stepdown(cluster.connection, stream)
            cluster.report(.sourceDistrusted(namespace: namespace, leader: leader, stepDown: NATSCluster.text(stepDown)))
        }
    }

    /// Makes a consumer from the last position delivered, next to those live (on the caller's thread: it waits for
    /// JetStream's answer). One that cannot be made is tried again (``scheduleAttempt(after:replacing:startedAt:)``):
    /// at once when the wait ran out, after ``refollowDelaySeconds`` after an error.
    private func startAttempt() {
        guard let context = openContext() else { return }
        let started = Self.now()
        guard let (attempt, from, wait, ended) = following.withLock({ progress in
            progress.start(at: started, keepingAtMost: Self.maxLiveConsumers)
        }) else { return }
        if let ended { retire(ended) }
        var created: OpaquePointer?
        // Released once nats.c called the handler for the last time (or at once when no consumer was made).
        let closure = Unmanaged.passRetained(FollowContext(log: self, attempt: attempt)).toOpaque()
        let status = canopy_js_follow(&created, cluster.connection, context, stream, from + 1, wait, {
            connection, _, message, closure in
            guard let closure, let message else { return }
            let following = Unmanaged<FollowContext>.fromOpaque(closure).takeUnretainedValue()
            var heartbeatCount: UInt64 = 0
            if canopy_js_control(connection, message, &heartbeatCount) {
                natsMsg_Destroy(message)
                following.log?.heard(from: following.attempt, count: heartbeatCount)
                return
            }
            var consumer = [CChar](repeating: 0, count: 256)
            var consumerSequence: UInt64 = 0
            let sequence = canopy_js_delivery(message, &consumer, Int32(consumer.count), &consumerSequence)
            let id = String(cString: canopy_msg_id(message))
            let payload = JetStreamLog.data(of: message)
            natsMsg_Destroy(message)
            guard sequence > 0, let log = following.log else { return }
            let delivery = Delivery(position: sequence, id: id, consumer: JetStreamLog.text(consumer),
                                    consumerSequence: consumerSequence, payload: payload)
            log.delivered(delivery, attempt: following.attempt)
        }, { closure in closure.map { Unmanaged<FollowContext>.fromOpaque($0).release() } }, closure)
        let made = Self.now()
        following.withLock { $0.answered(timedOut: status == NATS_TIMEOUT, limits: Self.consumerAnswerMillis) }
        guard status == NATS_OK, let created else {
            if let created { destroyLater(SubscriptionHandle(pointer: created)) }  // unsubscribed already
            // No consumer (no server reachable, no stream leader yet, or placed on a server that is down).
            let delay = status == NATS_TIMEOUT ? 0 : Self.refollowDelaySeconds
            return scheduleAttempt(after: delay, replacing: attempt, startedAt: started)
        }
        // Watched before another thread can see it: once recorded, any thread may end and retire it.
        cluster.events.watch(created) { [weak self] status in self?.consumerFailed(status, attempt: attempt) }
        let handle = SubscriptionHandle(pointer: created)
        // Ended meanwhile: another attempt passed, or following started anew.
        if !following.withLock({ $0.made(attempt, subscription: handle, at: made) }) { retire(handle) }
    }

    /// Starts an attempt after `delay` in place of `attempt` (started at `started`), unless a delivery passed
    /// since, or ``parallelAttempts`` other attempts started.
    private func scheduleAttempt(after delay: Double, replacing attempt: UInt64, startedAt started: Double) {
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self, following.withLock({ progress in
                !progress.isHalted && progress.lastDelivery < started
                    && progress.lastAttempt - attempt < UInt64(Self.parallelAttempts)
            }) else { return }
            startAttempt()
        }
    }

    /// Ends a subscription off the caller's thread. Its deliveries are dropped meanwhile (its attempt is no longer
    /// live); JetStream removes the consumer 5 s after it lost its subscriber.
    func retire(_ subscription: SubscriptionHandle) {
        cluster.events.unwatch(subscription.pointer)
        retiredSubscriptions.async { natsSubscription_Unsubscribe(subscription.pointer) }
        destroyLater(subscription)
    }

    /// How long after its unsubscribe a subscription is destroyed.
    static let destroyDelaySeconds = 1.0

    /// Destroys an unsubscribed subscription ``destroyDelaySeconds`` later. Its consumer goes on delivering to it
    /// until JetStream removes it, and nats.c 3.4.1's read loop can be handing it a message it looked up just before
    /// the unsubscribe: destroying it at once crashed a node (nats.c issue 637, fixed in later versions;
    /// docs/reliability.md).
    func destroyLater(_ subscription: SubscriptionHandle) {
        retiredSubscriptions.asyncAfter(deadline: .now() + Self.destroyDelaySeconds) {
            natsSubscription_Destroy(subscription.pointer)
        }
    }

    /// Ends every attempt (the log closes).
    func endFollowing() -> [SubscriptionHandle] {
        following.withLock { progress in
            progress.isHalted = true
            return progress.endAll()
        }
    }

    /// nats.c reports that `attempt`'s subscription dropped messages (on nats.c's thread): it ends, and another
    /// attempt starts.
    private func consumerFailed(_ status: natsStatus, attempt: UInt64) {
        guard status == NATS_SLOW_CONSUMER else { return }
        end(attempt)
        DispatchQueue.global().async { [weak self] in self?.startAttempt() }
    }

    /// `attempt`'s consumer sent a heartbeat or asked for flow control (on nats.c's thread). A heartbeat's `count`
    /// of the messages the consumer delivered beyond those its subscription got means it lost some: it ends, and
    /// another attempt starts.
    private func heard(from attempt: UInt64, count: UInt64) {
        guard following.withLock({ $0.heard(from: attempt, at: Self.now(), consumerDelivered: count) }) else { return }
        end(attempt)
        DispatchQueue.global().async { [weak self] in self?.startAttempt() }
    }

    /// Ends `attempt` (if live).
    private func end(_ attempt: UInt64) {
        if let subscription = following.withLock({ $0.end(attempt) }) { retire(subscription) }
    }

    /// `attempt`'s consumer delivered (on nats.c's thread, which the gate's questions may hold; each consumer's on
    /// its own). The consumer's own count of its messages must go up by one each time: a message its subscription
    /// lost (a gap here, whereas a gap in the stream's positions is entries removed below a snapshot, for the
    /// replica to handle) ends it. Each consumer starts after the last position delivered and delivers in order, so
    /// whichever passes a position first hands it on, and the others drop it.
    private func delivered(_ delivery: Delivery, attempt: UInt64) {
        let now = Self.now()
        let reception = following.withLock { progress in
            progress.receive(delivery.consumerSequence, at: delivery.position, from: attempt, heardAt: now)
        }
        switch reception {
        case .drop:
            return
        case .lost:
            end(attempt)
            DispatchQueue.global().async { [weak self] in self?.startAttempt() }
            return
        case .judge:
            break
        }
        let verdict = gate.admit(position: delivery.position, id: delivery.id, consumer: delivery.consumer,
                                 asking: gateQuestions())
        judged(delivery, from: attempt, verdict)
    }

    /// Acts on the gate's verdict on `attempt`'s delivery.
    private func judged(_ delivery: Delivery, from attempt: UInt64, _ verdict: LeaderGate.Verdict) {
        switch verdict {
        case .pass:
            // One position handed on at a time, in order, whichever consumer passed it.
            admission.withLock { _ in
                let now = Self.now()
                guard let (superseded, wasStalled) = following.withLock({ progress -> ([SubscriptionHandle], Bool)? in
                    let wasStalled = progress.stallReportedAt != nil
                    progress.stallReportedAt = nil
                    return progress.passed(delivery.position, from: attempt, at: now).map { ($0, wasStalled) }
                }) else { return }
                for subscription in superseded { retire(subscription) }
                deliver.withLock { $0 }?(delivery.position, delivery.payload)
                handedOn(delivery.id, at: delivery.position)
                if wasStalled { cluster.report(.resumed(namespace: namespace, position: delivery.position)) }
            }
        case .followAgain:
            end(attempt)
            scheduleAttempt(after: Self.refollowDelaySeconds, replacing: attempt, startedAt: Self.now())
        case .placedOffLeader:
            end(attempt)
            DispatchQueue.global().async { [weak self] in self?.startAttempt() }
        case .leaderContradicts, .leaderContradictsPeer, .diverged:
            leaderDisagrees(verdict)
        }
    }

    /// Acts on a verdict that the stream's leader disagrees with what the replica applied (whether a consumer's
    /// delivery or a read found it).
    func leaderDisagrees(_ verdict: LeaderGate.Verdict) {
        switch verdict {
        case .leaderContradicts(let leader, let after):
            // Its copy went wrong while it followed (docs/reliability.md): let another server lead, then check again.
            let namespace = namespace
            stepDownAndFollowAgain(after: after) { stepDown in
                .leaderContradicts(namespace: namespace, leader: leader, position: after, stepDown: stepDown)
            }
        case .leaderContradictsPeer(let leader, let peer, let position, let after):
            // The same, found by a replica ahead of this one (PeerMarks).
            let namespace = namespace
            stepDownAndFollowAgain(after: after) { stepDown in
                .leaderContradictsPeer(namespace: namespace, leader: leader, peer: peer, position: position,
                                       stepDown: stepDown)
            }
        case .diverged(let position):
            guard halt() != nil else { return }
            cluster.report(.diverged(namespace: namespace, position: position))
            // The replica rebuilds from the log and follows again; without one to tell, at least follow the leader.
            if let diverged = divergence.withLock({ $0 }) {
                DispatchQueue.global().async { diverged() }
            } else if let deliver = deliver.withLock({ $0 }) {
                let after = following.withLock { $0.delivered }
                DispatchQueue.global().async { [self] in follow(after: after, deliver: deliver) }
            }
        case .pass, .followAgain, .placedOffLeader:
            break
        }
    }

    /// Stops following, asks the stream's leader to step down, reports it (`event` of the step-down's answer), and
    /// follows again after `after` ``contradictedRetrySeconds`` later, unless following started anew meanwhile.
    private func stepDownAndFollowAgain(after: UInt64, event: @escaping @Sendable (String) -> FollowingEvent) {
        guard let halted = halt(), let deliver = deliver.withLock({ $0 }) else { return }
        DispatchQueue.global().async { [weak self] in
            guard let self else { return }
            let stepDown = canopy_js_stream_stepdown(cluster.connection, stream)
            cluster.report(event(NATSCluster.text(stepDown)))
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.contradictedRetrySeconds) { [weak self] in
                guard let self, following.withLock({ $0.halts == halted && $0.isHalted }) else { return }
                follow(after: after, deliver: deliver)
            }
        }
    }

    /// Stops following until ``follow(after:deliver:)`` is called again: nothing passes meanwhile. Reports which
    /// halt this is (`nil` when following was already halted).
    private func halt() -> UInt64? {
        let halted: (UInt64, [SubscriptionHandle])? = following.withLock { progress in
            guard !progress.isHalted else { return nil }
            progress.isHalted = true
            progress.halts += 1
            return (progress.halts, progress.endAll())
        }
        guard let (halts, ended) = halted else { return nil }
        for subscription in ended { retire(subscription) }
        return halts
    }

    /// The gate's questions, asked of the servers (nats.c waits up to the context's 3 s for each answer).
    func gateQuestions() -> LeaderGate.Questions {
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
    /// did not acknowledge, and the consumers may live on a server that stalled or died; waiting for the retry
    /// timer and for missed heartbeats cost seconds after each election. So on each advisory the log publishes again
    /// every append not acknowledged yet and starts ``parallelAttempts`` attempts from the last position delivered
    /// (the gate checks each against the new leader). The timers stay for an advisory lost on the way.
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
        let isFollowing = following.withLock { progress in
            // Waits that ran out while no server led are no sign of a slow link.
            progress.consumerWaitMillis = Self.consumerAnswerMillis.lowerBound
            return !progress.isHalted
        }
        guard isFollowing else { return }
        for _ in 1..<Self.parallelAttempts { DispatchQueue.global().async { [weak self] in self?.startAttempt() } }
        startAttempt()
    }

    /// The text nats.c wrote into `buffer` (up to its terminating zero).
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The stream is known to hold `head` (a publish acknowledged there, a checkpoint, a reader's question).
    func learned(head: UInt64) {
        following.withLock { $0.knownHead = max($0.knownHead, head) }
    }

    /// Starts an attempt when the stream holds more than delivered and nothing came for ``followStallSeconds``,
    /// nor was an attempt started for as long, or when the newest attempt's consumer went silent for
    /// ``silenceSeconds`` (its server died, stalled or was cut off: it is kept, as it may come back as the leader).
    /// nats.c's thread-safe calls may wait on the servers: off the timer. Reports a stall every
    /// ``stallReportSeconds`` while it lasts.
    func followAgainIfStalled() {
        let now = Self.now()
        let (startAnother, report) = following.withLock { progress -> (Bool, FollowingEvent?) in
            let stalled = !progress.isHalted && progress.knownHead > progress.delivered
                && now - progress.lastDelivery >= Self.followStallSeconds
                && now - progress.lastAttemptStarted >= Self.followStallSeconds
            let startAnother = progress.newestWentSilent(at: now, after: Self.silenceSeconds) || stalled
            guard progress.stallToReport(at: now, after: Self.stallReportSeconds) else { return (startAnother, nil) }
            let report = FollowingEvent.stalled(namespace: namespace, seconds: Int(now - progress.lastDelivery),
                                          delivered: progress.delivered, knownHead: progress.knownHead,
                                          halted: progress.isHalted, attempts: progress.liveAttempts)
            return (startAnother, report)
        }
        if let report { cluster.report(report) }
        if startAnother { DispatchQueue.global().async { [weak self] in self?.startAttempt() } }
    }
}
