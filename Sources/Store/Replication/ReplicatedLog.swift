/// Where a clustered store's entries get their one order: a log shared by every node serving the namespace.
///
/// A clustered ``Store`` applies nothing directly. It appends each task's writes as one ``Proposal`` and applies
/// the log's entries in the log's order, its own among everyone's, with the same pure transition as a single node
/// (``LogState/apply(_:isReplay:)``). Every replica therefore builds the same tree and takes the same decisions. The
/// store holds no networking: an implementation (the cluster module's JetStream stream) brings the log.
/// Callbacks may run on any thread, one at a time per kind.
public protocol ReplicatedLog: AnyObject, Sendable {
    /// This node's name among the log's writers, unique to this process (a restarted node gets a new one): it tells
    /// a store which entries are its own proposals.
    var node: String { get }

    /// The largest payload one append may carry.
    var maxPayloadBytes: Int { get }

    /// Opens the log (creating it when it does not exist). What the log holds is then asked with
    /// ``lastPosition(completion:)``: a server answering the opening may report a stale copy.
    func open(completion: @escaping @Sendable (Result<Void, ReplicationError>) -> Void)

    /// Reports the position of the log's last entry now (what a replica must reach to hold everything
    /// acknowledged so far, by any node). It must not be behind an entry acknowledged before the call: a log whose
    /// servers can answer from a stale copy appends a ``LogBarrier`` and reports its position.
    func lastPosition(completion: @escaping @Sendable (Result<UInt64, ReplicationError>) -> Void)

    /// Delivers every entry after position `after`, in order and each once, with its position, for as long as the
    /// log is open; replaces any earlier following. Entries removed below a snapshot are skipped: the first one
    /// delivered then lies beyond `after + 1`, and the replica must restore a snapshot instead.
    func follow(after: UInt64, deliver: @escaping @Sendable (_ position: UInt64, _ payload: [UInt8]) -> Void)

    /// A replica stores a snapshot after applying every this many positions (0: never).
    var snapshotInterval: UInt64 { get }

    /// Stores `snapshot`, the encoded state of a replica after the entry at `position`, unless the log holds a
    /// snapshot at that position or later (then reports `false`). Once stored, the log removes its entries up to
    /// the snapshot before it, and older snapshots: it keeps two, so a replica that lags by less than an interval
    /// still finds every entry it needs.
    func storeSnapshot(_ snapshot: [UInt8], position: UInt64,
                       completion: @escaping @Sendable (Result<Bool, ReplicationError>) -> Void)

    /// The newest snapshot the log holds: its position and bytes (`nil` when there is none).
    func latestSnapshot(completion: @escaping @Sendable (Result<StoredSnapshot?, ReplicationError>) -> Void)

    /// Appends `payload`. An append retried under the same `id` is stored once. `failed` runs when the payload could
    /// not be appended for good (it then never appears among the entries).
    func append(_ payload: [UInt8], id: String, failed: @escaping @Sendable (ReplicationError) -> Void)

    /// Tells the other replicas this replica's root hash after applying the entry at `position` (best effort,
    /// not through the log).
    func announce(_ checkpoint: Checkpoint)

    /// Calls `received` with the checkpoints other replicas announce.
    func listenForCheckpoints(_ received: @escaping @Sendable (Checkpoint) -> Void)

    /// Calls `diverged` when the log finds that entries it delivered are not the ones it holds at their positions
    /// (a copy of the log that differed from the one appends are acknowledged against): the replica then rebuilds
    /// from the log and follows it again.
    func watchDivergence(_ diverged: @escaping @Sendable () -> Void)

    /// The entries this replica rebuilt from were outvoted again by the other replicas' checkpoints: the copy of
    /// the log it reads is wrong. A log whose copies can differ stops serving this replica from that copy.
    func distrustSource()

    /// Calls `changed` with `false` when this node loses its way to the log (it can neither append nor follow,
    /// and may be behind the others) and with `true` when it has it again.
    func watchReachability(_ changed: @escaping @Sendable (_ reachable: Bool) -> Void)

    /// Stops following and appending.
    func close()
}

extension ReplicatedLog {
    /// A log whose deliveries cannot differ from what it holds never reports a divergence.
    public func watchDivergence(_ diverged: @escaping @Sendable () -> Void) {}

    /// A log with one copy has no other to serve from.
    public func distrustSource() {}

    /// A log that is always reachable never reports otherwise.
    public func watchReachability(_ changed: @escaping @Sendable (_ reachable: Bool) -> Void) {}
}

/// A snapshot as the log holds it.
public struct StoredSnapshot: Sendable, Equatable {
    /// The position of the last entry the snapshot includes.
    public let position: UInt64
    /// The encoded state.
    public let bytes: [UInt8]

    /// A stored snapshot.
    public init(position: UInt64, bytes: [UInt8]) {
        self.position = position
        self.bytes = bytes
    }
}

/// A replica's root hash at a log position, compared across replicas to detect divergence.
public struct Checkpoint: Sendable, Equatable {
    /// The announcing node.
    public let node: String
    /// The log position after which the hash was taken.
    public let position: UInt64
    /// ``Store/hash(of:)`` of the whole tree there.
    public let hash: String

    /// A checkpoint.
    public init(node: String, position: UInt64, hash: String) {
        self.node = node
        self.position = position
        self.hash = hash
    }
}

/// Why the replicated log could not be opened or appended to.
public struct ReplicationError: Error, Sendable, CustomStringConvertible {
    /// A one-line description from the log's engine.
    public let description: String

    /// An error with its description.
    public init(_ description: String) {
        self.description = description
    }
}
