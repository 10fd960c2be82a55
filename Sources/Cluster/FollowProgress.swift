/// How far a log's following got, its live attempts, and what the stream is known to hold beyond (guarded by the
/// log's lock; JetStreamLog+Following.swift).
struct FollowProgress {
    /// One consumer following: its subscription once made, its count of the messages it delivered so far, when it
    /// was last heard from (a message or a heartbeat), and whether its silence since was acted on.
    struct Attempt {
        var subscription: SubscriptionHandle?
        var consumerDelivered: UInt64 = 0
        var lastHeard = 0.0
        var silenceNoticed = false
    }

    /// What to do with a delivery.
    enum Reception {
        /// Ask the gate.
        case judge
        /// Nothing: its attempt ended, following is halted, or the replica already has its position.
        case drop
        /// Its consumer's own count skipped a message: the attempt lost one, and ends.
        case lost
    }

    /// The last position delivered (or the one following started after).
    var delivered: UInt64 = 0
    /// When a delivery last passed (or following started), in seconds of uptime.
    var lastDelivery = 0.0
    /// The highest position the stream is known to hold.
    var knownHead: UInt64 = 0
    /// The live attempts, by number.
    private(set) var attempts: [UInt64: Attempt] = [:]
    /// The attempt whose delivery passed last (it is never the one ended to make room).
    private(set) var primary: UInt64?
    /// The number of the last attempt started, and when.
    private(set) var lastAttempt: UInt64 = 0
    private(set) var lastAttemptStarted = 0.0
    /// How long the next consumer's making may wait for JetStream's answer (``JetStreamLog/consumerAnswerMillis``).
    var consumerWaitMillis = JetStreamLog.consumerAnswerMillis.lowerBound
    /// Following is halted (not asked for yet, a leader contradicted the replica, or it diverged): nothing passes
    /// until it follows anew.
    var isHalted = false
    /// Counts halts (a follow-up scheduled for one halt does nothing after another).
    var halts: UInt64 = 0
    /// When a stall was last reported, until a delivery passes again.
    var stallReportedAt: Double?
    /// Entries are being read from the stream's leader by position (JetStreamLog+Reading.swift).
    private(set) var isReading = false

    /// The number of live attempts.
    var liveAttempts: Int { attempts.count }

    /// A log's progress before the replica asks it to follow: halted, so that nothing starts a consumer early.
    static var beforeFollowing: FollowProgress {
        var progress = FollowProgress()
        progress.isHalted = true
        return progress
    }

    /// Whether to report a stall at `now`: following began, the stream is known to hold more than was delivered,
    /// nothing passed for `bound` seconds, and no stall was reported within as long.
    mutating func stallToReport(at now: Double, after bound: Double) -> Bool {
        guard lastAttempt > 0, knownHead > delivered, now - lastDelivery >= bound,
            now - (stallReportedAt ?? -bound) >= bound
        else { return false }
        stallReportedAt = now
        return true
    }

    /// Starts an attempt from the last position delivered: its number, that position and the wait for its making,
    /// and the subscription of the attempt ended to keep at most `limit` live. `nil` while halted.
    mutating func start(at now: Double, keepingAtMost limit: Int)
        -> (attempt: UInt64, from: UInt64, wait: Int64, ended: SubscriptionHandle?)?
    {
        guard !isHalted else { return nil }
        lastAttempt += 1
        lastAttemptStarted = now
        attempts[lastAttempt] = Attempt()
        var ended: SubscriptionHandle?
        if attempts.count > limit, let oldest = attempts.keys.filter({ $0 != lastAttempt && $0 != primary }).min() {
            ended = end(oldest)
        }
        return (lastAttempt, delivered, consumerWaitMillis, ended)
    }

    /// JetStream answered `attempt`'s making, or did not within the wait: the next wait doubles after a timeout (up
    /// to `limits`' upper bound) and goes back to the lower bound otherwise.
    mutating func answered(timedOut: Bool, limits: ClosedRange<Int64>) {
        consumerWaitMillis = timedOut ? min(limits.upperBound, consumerWaitMillis * 2) : limits.lowerBound
    }

    /// `attempt`'s consumer was made at `now`; false when the attempt ended meanwhile (the caller retires the
    /// subscription).
    mutating func made(_ attempt: UInt64, subscription: SubscriptionHandle, at now: Double) -> Bool {
        guard attempts[attempt] != nil else { return false }
        attempts[attempt]?.subscription = subscription
        attempts[attempt]?.lastHeard = now
        return true
    }

    /// `attempt`'s consumer sent a heartbeat or a flow control request at `now`, having delivered
    /// `consumerDelivered` messages by its own count (0: not told). True when that is more than its subscription
    /// got: the attempt lost messages, and ends.
    mutating func heard(from attempt: UInt64, at now: Double, consumerDelivered: UInt64) -> Bool {
        guard !isHalted, let live = attempts[attempt] else { return false }
        attempts[attempt]?.lastHeard = now
        attempts[attempt]?.silenceNoticed = false
        return consumerDelivered > live.consumerDelivered
    }

    /// Whether the newest attempt's consumer, made, has been silent for `bound` seconds at `now` (reported once
    /// per silence).
    mutating func newestWentSilent(at now: Double, after bound: Double) -> Bool {
        guard !isHalted, let newest = attempts[lastAttempt], newest.subscription != nil, !newest.silenceNoticed,
            now - newest.lastHeard >= bound
        else { return false }
        attempts[lastAttempt]?.silenceNoticed = true
        return true
    }

    /// Ends `attempt`: its subscription, for the caller to retire.
    mutating func end(_ attempt: UInt64) -> SubscriptionHandle? {
        if primary == attempt { primary = nil }
        return attempts.removeValue(forKey: attempt)?.subscription
    }

    /// Ends every attempt: their subscriptions, for the caller to retire.
    mutating func endAll() -> [SubscriptionHandle] {
        defer {
            attempts.removeAll()
            primary = nil
        }
        return attempts.values.compactMap(\.subscription)
    }

    /// Whether to start reading from the stream's leader at `now`: following is on, no read runs, the stream is
    /// known to hold more than was delivered, and nothing passed for `bound` seconds. Marks a read running.
    mutating func startReading(at now: Double, after bound: Double) -> Bool {
        guard !isHalted, !isReading, knownHead > delivered, now - lastDelivery >= bound else { return false }
        isReading = true
        return true
    }

    /// The read started by ``startReading(at:after:)`` ended.
    mutating func endReading() {
        isReading = false
    }

    /// An entry read from the leader at `position` is delivered at `now`, if it is the next one: a read never
    /// skips a position (a gap here would read as entries removed below a snapshot), and following may have
    /// started anew elsewhere meanwhile.
    mutating func read(_ position: UInt64, at now: Double) -> Bool {
        guard !isHalted, position == delivered + 1 else { return false }
        delivered = position
        lastDelivery = now
        stallReportedAt = nil
        return true
    }

    /// A delivery at `position`, the `consumerSequence`th of `attempt`'s consumer, received at `now`.
    mutating func receive(_ consumerSequence: UInt64, at position: UInt64, from attempt: UInt64,
                          heardAt now: Double) -> Reception {
        guard !isHalted, let live = attempts[attempt] else { return .drop }
        attempts[attempt]?.lastHeard = now
        attempts[attempt]?.silenceNoticed = false
        guard consumerSequence == live.consumerDelivered + 1 else { return .lost }
        attempts[attempt]?.consumerDelivered = consumerSequence
        return position > delivered ? .judge : .drop
    }

    /// `attempt`'s delivery at `position` passed the gate: it is delivered, and every other attempt ends (their
    /// subscriptions, for the caller to retire). `nil`: drop it after all (the attempt ended meanwhile).
    mutating func passed(_ position: UInt64, from attempt: UInt64, at now: Double) -> [SubscriptionHandle]? {
        guard !isHalted, attempts[attempt] != nil, position > delivered else { return nil }
        delivered = position
        lastDelivery = now
        primary = attempt
        guard attempts.count > 1 else { return [] }
        let others = attempts.keys.filter { $0 != attempt }
        return others.compactMap { end($0) }
    }
}

/// A subscription of nats.c's (thread-safe: usable from any thread).
struct SubscriptionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// One message a consumer delivered.
struct Delivery {
    let position: UInt64
    /// Its `Nats-Msg-Id`.
    let id: String
    /// The consumer that delivered it.
    let consumer: String
    /// The consumer's count of the messages it delivered, this one included.
    let consumerSequence: UInt64
    let payload: [UInt8]
}

/// What a subscription made to follow passes to nats.c as its closure: the log, and which attempt it belongs to
/// (deliveries of an attempt that ended are dropped).
final class FollowContext: @unchecked Sendable {
    weak var log: JetStreamLog?
    let attempt: UInt64

    init(log: JetStreamLog, attempt: UInt64) {
        self.log = log
        self.attempt = attempt
    }
}
