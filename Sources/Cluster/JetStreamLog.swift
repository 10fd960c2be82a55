import CNats
import Dispatch
import Store
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A namespace's replicated log on a JetStream stream: the stream `CANOPY_<hex name>` on subject
/// `canopy.log.<hex name>`, file-backed, with the cluster's replica count.
///
/// - **Appends** are asynchronous publishes with the proposal's id as `Nats-Msg-Id`, many in flight. One that is
///   not acknowledged within ``retryAfterSeconds`` (a leader election, a reconnect) is published again under the
///   same id, which the stream stores once (its de-duplication window is 10 minutes), oldest first, for as long
///   as the log is open: a write waits while the log is unreachable, as an SDK's writes wait while offline.
///   Replicas apply each node's proposals in the node's order whatever order the stream stored them in.
/// - **Following** is a push consumer from the requested position, with a heartbeat every second while idle; nats.c
///   delivers on its own thread, one message at a time. The log makes a new consumer whenever the current one
///   fails (JetStreamLog+Following.swift), and also when it knows the stream holds more (a publish acknowledged at
///   a later position, another node's checkpoint, a reader's question) and nothing came for ``followStallSeconds``.
///   Meanwhile it reads the missing entries from the stream's leader by position (JetStreamLog+Reading.swift), so
///   that following does not depend on JetStream placing a consumer on the leader.
public final class JetStreamLog: ReplicatedLog, @unchecked Sendable {
    /// An unacknowledged append is published again after this long.
    static let retryAfterSeconds = 2.0
    /// A consumer that delivered nothing this long while the stream is known to hold more is made anew.
    static let followStallSeconds = 3.0

    public var node: String { cluster.node }
    /// The servers' `max_payload`, less room for the message's headers.
    public var maxPayloadBytes: Int { max(1024, Int(natsConnection_GetMaxPayload(cluster.connection)) - 1024) }
    let cluster: NATSCluster
    /// The namespace whose log this is.
    let namespace: String
    let stream: String
    let subject: String
    /// The core NATS subject (not stored) where replicas announce checkpoints.
    let checkpointSubject: String
    /// The core NATS subject (not stored) where replicas announce the last entry they applied (``PeerMarks``).
    let appliedSubject: String
    /// The stream holding the namespace's snapshots, and its subjects' prefix (JetStreamLog+Snapshots.swift).
    let snapshotStream: String
    let snapshotSubject: String

    /// Appends not acknowledged yet, by id.
    private let pending = Mutex<[String: PendingAppend]>([:])
    /// Appends acknowledged, until the log delivers their position.
    private let unconfirmed = Mutex(UnconfirmedAppends())
    /// The last entry handed on, and whether it was announced (JetStreamLog+Marks.swift).
    let lastHanded = Mutex<(position: UInt64, id: String, announced: Bool)>((0, "", true))
    let handles = Mutex(Handles())
    let deliver = Mutex<(@Sendable (UInt64, [UInt8]) -> Void)?>(nil)
    /// Whom to tell when the entries delivered turn out not to be the stream leader's (JetStreamLog+Following.swift).
    let divergence = Mutex<(@Sendable () -> Void)?>(nil)
    let following = Mutex(FollowProgress.beforeFollowing)
    /// Held while a delivery that passed the gate is handed on, whichever consumer delivered it
    /// (JetStreamLog+Following.swift).
    let admission = Mutex(())
    /// Where this node's snapshots are stored, one after the other (JetStreamLog+Snapshots.swift).
    let snapshotQueue = DispatchQueue(label: "canopy.log.snapshots")
    /// Where the subscriptions of ended followings are unsubscribed and destroyed (JetStreamLog+Following.swift).
    let retiredSubscriptions = DispatchQueue(label: "canopy.log.retired-subscriptions")
    /// Where entries are read from the stream's leader by position while following stalls (JetStreamLog+Reading.swift).
    let leaderReads: DispatchQueue = {
        let queue = DispatchQueue(label: "canopy.log.leader-reads")
        queue.setSpecific(key: JetStreamLog.leaderReadsKey, value: ())
        return queue
    }()
    /// Marks the queues of reads from the leader.
    static let leaderReadsKey = DispatchSpecificKey<Void>()
    /// Barriers appended so far (``lastPosition(completion:)``).
    private let barriers = Atomic<UInt64>(0)
    let gate = LeaderGate()

    init(cluster: NATSCluster, namespace: String) {
        self.cluster = cluster
        self.namespace = namespace
        let name = Self.hex(namespace)
        stream = Self.streamPrefix + name
        subject = "canopy.log.\(name)"
        checkpointSubject = "canopy.check.\(name)"
        appliedSubject = "canopy.applied.\(name)"
        snapshotStream = "CANOPYS_\(name)"
        snapshotSubject = "canopy.snap.\(name)"
    }

    deinit {
        close()
    }

    /// The start of every log stream's name; the namespace's name in hexadecimal follows.
    static let streamPrefix = "CANOPY_"

    /// `namespace`'s UTF-8 in lowercase hexadecimal (stream names and subjects take only a few characters).
    static func hex(_ namespace: String) -> String {
        namespace.utf8.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
    }

    /// The namespace whose log is stream `stream`; `nil` for any other stream (a snapshot stream, another
    /// application's).
    static func namespace(ofStream stream: String) -> String? {
        guard stream.hasPrefix(streamPrefix) else { return nil }
        let digits = Array(stream.utf8.dropFirst(streamPrefix.utf8.count))
        guard !digits.isEmpty, digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    public func open(completion: @escaping @Sendable (Result<Void, ReplicationError>) -> Void) {
        DispatchQueue.global().async { [self] in completion(openNow()) }
    }

    private func openNow() -> Result<Void, ReplicationError> {
        var created: OpaquePointer?
        let closure = Unmanaged.passUnretained(self).toOpaque()
        var status = canopy_js_context(&created, cluster.connection, { _, message, ack, error, closure in
            guard let closure else { return }
            let log = Unmanaged<JetStreamLog>.fromOpaque(closure).takeUnretainedValue()
            let id = message.map { String(cString: canopy_msg_id($0)) } ?? ""
            if let ack, error == nil { log.learned(head: ack.pointee.Sequence) }
            log.acknowledged(id: id, at: error == nil ? ack?.pointee.Sequence : nil,
                             duplicate: error == nil && ack?.pointee.Duplicate == true)
            natsMsg_Destroy(message)
        }, closure, 4096)
        guard status == NATS_OK, let created else {
            return .failure(ReplicationError("JetStream context: \(NATSCluster.text(status))"))
        }
        handles.withLock { $0.context = created }
        // The stream's last sequence as the answering server knows it: not trusted (``lastPosition(completion:)``).
        var last: UInt64 = 0
        var error = jsErrCode(rawValue: 0)
        for _ in 0..<60 {
            status = canopy_js_ensure_stream(created, stream, subject, Int64(cluster.replicas), 600_000_000_000,
                                             16 << 20, &last, &error)
            // Right after the servers start, JetStream may have no leader yet: retry for a while.
            guard status != NATS_OK else { break }
            usleep(500_000)
        }
        guard status == NATS_OK else {
            return .failure(ReplicationError("stream \(stream): \(NATSCluster.text(status)) (JetStream error \(error.rawValue))"))
        }
        listenForLeaderElections()
        listenForPeersApplied()
        startRetryTimer()
        return .success(())
    }

    /// The JetStream context, once the log is open.
    func openContext() -> OpaquePointer? {
        handles.withLock { $0.context }
    }

    /// The position of a ``LogBarrier`` appended now. A stream's state as a server reports it (`STREAM.INFO`) can be
    /// behind: a server cut off from the two others answers from its own copy once it finds the stream without a
    /// leader, and so does a leader deposed by a partition until it steps down. An append is acknowledged only once
    /// a majority stored it, after everything acknowledged before.
    public func lastPosition(completion: @escaping @Sendable (Result<UInt64, ReplicationError>) -> Void) {
        DispatchQueue.global().async { [self] in
            guard let context = openContext() else {
                completion(.failure(ReplicationError("the log is not open")))
                return
            }
            var last: UInt64 = 0
            let barrier = LogBarrier.payload(node: cluster.node)
            // An id of its own, so that the leader gate can tell one barrier from another at a position.
            let id = "\(cluster.node)-b\(barriers.add(1, ordering: .relaxed).newValue)"
            let status = barrier.withUnsafeBytes { bytes in
                canopy_js_publish(context, subject, bytes.baseAddress, Int32(bytes.count), id, &last)
            }
            if status == NATS_OK { learned(head: last) }
            completion(status == NATS_OK ? .success(last)
                : .failure(ReplicationError("stream \(stream): \(NATSCluster.text(status))")))
        }
    }

    public func append(_ payload: [UInt8], id: String, failed: @escaping @Sendable (ReplicationError) -> Void) {
        let append = PendingAppend(payload: payload, failed: failed, firstSent: Self.now(), lastSent: Self.now())
        pending.withLock { $0[id] = append }
        publish(payload, id: id)
    }

    public func announce(_ checkpoint: Checkpoint) {
        let text = "\(checkpoint.node) \(checkpoint.position) \(checkpoint.hash)"
        _ = natsConnection_PublishString(cluster.connection, checkpointSubject, text)
    }

    public func listenForCheckpoints(_ received: @escaping @Sendable (Checkpoint) -> Void) {
        let subscription = MessageListener.subscribe(cluster.connection, checkpointSubject) { [weak self] data in
            let fields = String(decoding: data, as: UTF8.self).split(separator: " ")
            guard fields.count == 3, let position = UInt64(fields[1]) else { return }
            let checkpoint = Checkpoint(node: String(fields[0]), position: position, hash: String(fields[2]))
            self?.learned(head: checkpoint.position)
            received(checkpoint)
        }
        if let subscription { handles.withLock { $0.listeners.append(subscription) } }
    }

    /// Tells `changed` when the connection to the NATS servers is lost (`false`) and made again (`true`); at once
    /// when it is lost now.
    public func watchReachability(_ changed: @escaping @Sendable (_ reachable: Bool) -> Void) {
        cluster.events.add(self, changed)
        if natsConnection_Status(cluster.connection) != NATS_CONN_STATUS_CONNECTED { changed(false) }
    }

    public func close() {
        cluster.events.remove(self)
        let closing = handles.withLock { handles in
            defer { handles = Handles() }
            return handles
        }
        let abandoned = pending.withLock { pending in
            defer { pending.removeAll() }
            return pending.values.map(\.failed)
        }
        for report in abandoned { report(ReplicationError("the log was closed")) }
        unconfirmed.withLock { $0.removeAll() }
        closing.timer?.cancel()
        for subscription in endFollowing() { retire(subscription) }
        retiredSubscriptions.sync {}  // every following subscription unsubscribed before the context goes
        // And a read from the leader (it stops at its next entry: following has ended), unless this is its queue:
        // a log released by the read's block closes there once the read returned.
        if DispatchQueue.getSpecific(key: Self.leaderReadsKey) == nil { leaderReads.sync {} }
        if let context = closing.context { jsCtx_Destroy(context) }
        for listener in closing.listeners { listener.end() }
    }

    // MARK: - Appending

    private func publish(_ payload: [UInt8], id: String) {
        guard let context = openContext() else { return }
        let status = payload.withUnsafeBytes { bytes in
            canopy_js_publish_async(context, subject, bytes.baseAddress, Int32(bytes.count), id)
        }
        // A refused publish (disconnected, too many pending) is retried by the timer like an unacknowledged one.
        _ = status
    }

    /// The outcome of an asynchronous publish (on nats.c's thread): acknowledged at `position` (as a `duplicate`
    /// of an id the stream's leader holds already), or not (`nil`: retried by the timer under the same id). An
    /// acknowledged append is kept until the log delivers its position, unless it was published again as missing
    /// and JetStream answered that the leader holds it: publishing it again could not add it, and the position named
    /// is in the leader's numbering, which the copy followed may not share (docs/reliability.md, "copies numbered
    /// differently"). Before, such an append was published again and again, hundreds of times a second.
    private func acknowledged(id: String, at position: UInt64?, duplicate: Bool) {
        guard let position, let append = pending.withLock({ $0.removeValue(forKey: id) }) else { return }
        guard !(duplicate && append.publishedAsMissing) else { return }
        let acknowledged = UnconfirmedAppends.Append(id: id, payload: append.payload, failed: append.failed)
        if let lost = unconfirmed.withLock({ $0.acknowledged(acknowledged, at: position) }) {
            publishAgain([lost], missingAt: position)
        }
    }

    /// The log handed on entry `id` at `position` (under `admission`): an append acknowledged there under another id
    /// is missing from the copy followed, and is published again (``UnconfirmedAppends``).
    func handedOn(_ id: String, at position: UInt64) {
        lastHanded.withLock { $0 = (position, id, false) }
        let lost = unconfirmed.withLock { $0.delivered(id, at: position) }
        if !lost.isEmpty { publishAgain(lost, missingAt: position) }
    }

    /// Publishes again appends JetStream acknowledged at `position` that the copy followed does not hold there; they
    /// wait for an acknowledgement again.
    private func publishAgain(_ lost: [UnconfirmedAppends.Append], missingAt position: UInt64) {
        let now = Self.now()
        pending.withLock { pending in
            for append in lost {
                pending[append.id] = PendingAppend(payload: append.payload, failed: append.failed, firstSent: now,
                                                   lastSent: now, publishedAsMissing: true)
            }
        }
        // Off the caller, which holds `admission`: publishing may wait for room among the publishes in flight.
        DispatchQueue.global().async { [self] in
            for append in lost { publish(append.payload, id: append.id) }
        }
        cluster.report(.appendMissing(namespace: namespace, position: position, ids: lost.map(\.id)))
    }

    private func startRetryTimer() {
        let source = DispatchSource.makeTimerSource(queue: .global())
        source.schedule(deadline: .now() + 0.5, repeating: 0.5)
        source.setEventHandler { [weak self] in
            self?.retryOverdue()
            self?.announceApplied()
            self?.followAgainIfStalled()
            self?.readFromLeaderIfStalled()
        }
        source.resume()
        handles.withLock { $0.timer = source }
    }

    /// Publishes again, oldest first, what was not acknowledged in time (with `all`, every append not acknowledged
    /// yet: a new stream leader was elected, and what the last one did not acknowledge may never be).
    func retryOverdue(all: Bool = false) {
        let now = Self.now()
        var again: [(first: Double, id: String, payload: [UInt8])] = []
        pending.withLock { pending in
            for (id, append) in pending where all || now - append.lastSent >= Self.retryAfterSeconds {
                pending[id]?.lastSent = now
                again.append((append.firstSent, id, append.payload))
            }
        }
        for append in again.sorted(by: { $0.first < $1.first }) { publish(append.payload, id: append.id) }
    }

    static func now() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }
}

/// nats.c's objects of one log (the pointers are used from any thread: nats.c is thread-safe).
struct Handles: @unchecked Sendable {
    var context: OpaquePointer?
    var timer: (any DispatchSourceTimer)?
    /// The core NATS subscriptions of the log: checkpoints, the stream's leader elections.
    var listeners: [MessageListener.Subscription] = []
}

/// An append waiting for its acknowledgement.
struct PendingAppend: Sendable {
    let payload: [UInt8]
    let failed: @Sendable (ReplicationError) -> Void
    let firstSent: Double
    var lastSent: Double
    /// Published again because the copy followed held another entry where it was acknowledged.
    var publishedAsMissing = false
}
