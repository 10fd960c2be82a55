import DataModel

/// How a ``Store``'s entries get their place in the namespace's one order and become durable. The store picks its
/// driver once, when it is made (``StoreConfiguration/replication``), and calls it instead of asking which mode it
/// is in:
///
/// - ``JournalDriver``, a single node: the sequencer gives each entry its place at once and appends it to the
///   namespace's journal (or keeps it in memory only).
/// - ``ReplicaDriver``, a node of a cluster: the sequencer proposes entries to the ``ReplicatedLog`` shared by every
///   node and applies the log's entries in the log's order, its own among everyone's.
///
/// Both apply entries with the same pure transition (``LogState/apply(_:isReplay:)``) to the ``Sequencer``'s state,
/// and both own their state on the sequencer. The store calls a driver once per task (a batch of writes is one
/// call), never once per write target. Methods run on the sequencer unless their documentation says otherwise.
protocol LogDriver: AnyObject, Sendable {
    /// Loads the namespace: from its directory (or nothing, in memory), or by catching up with the cluster's log.
    /// `loaded` runs on the sequencer once loading ended; until then ``run(_:)`` holds what it is given, or the
    /// sequencer is busy loading.
    func load(loaded: @escaping @Sendable (Result<LoadReport, JournalError>) -> Void)

    /// Runs a task submitted to the store now, or holds it (in order) until the store serves.
    func run(_ task: @escaping @Sendable () -> Void)

    /// Ends the sequencer's turn: what the writes since the last end deferred (handing their events on, their
    /// journal append, their completions) happens now, once for all. A no-op when nothing was deferred.
    func endTurn()

    /// Runs the completion of a write refused before it was sequenced, after the completions of the turn's writes
    /// before it.
    func settleRefused(_ completion: @escaping @Sendable () -> Void)

    /// Runs an in-order read now, or once the writes this node submitted before it are applied.
    func runRead(_ read: @escaping () -> Void)

    /// Whether the state an in-order read saw holds every write acknowledged by any node, so that later readers may
    /// use it without a place in the order (``Store/current``).
    var publishesCurrent: Bool { get }

    /// Whether the node has told its owner that it cannot reach the cluster's log (never on a single node). Any
    /// thread.
    var isCutOff: Bool { get }

    /// Why a write cannot be sequenced now, `nil` when it can.
    func refusal() -> StoreError?

    /// Sequences `write` (not refused) and completes it under the conditions of ``Store/write(_:by:completion:)``.
    func write(_ write: StoreWrite, by caller: WriteCaller,
               completion: @escaping @Sendable (Result<WriteOutcome, StoreError>) -> Void)

    /// Sequences `writes` (not refused) in order, as ``Store/write(batch:by:completion:)``.
    func write(batch writes: [StoreWrite], by caller: WriteCaller,
               completion: @escaping @Sendable (Int, Result<WriteOutcome, StoreError>) -> Void)

    /// Puts the rules `source` in force (not refused, and not the text in force already).
    func installRules(source: [UInt8]?, completion: (@Sendable (Result<RulesRevision, StoreError>) -> Void)?)

    /// Runs `then` once this node holds every write any node acknowledged before the call: at once, on the
    /// caller's thread, when there is nothing to wait for; otherwise handed to `hop` once caught up. Any thread.
    func awaitLogHead(resumingOn hop: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
                      _ then: @escaping @Sendable () -> Void)

    /// Arms `write` (`nil`: disarms) as connection `session`'s onDisconnect write; `completion` gets whether it
    /// is armed. Any thread.
    func armDisconnect(session: String, write: StoreWrite?, completion: @escaping @Sendable (Bool) -> Void)

    /// Connection `session` ended: runs its armed write at this place in the order. `completion` gets the write's
    /// result (`nil` when nothing was armed).
    func fireDisconnect(session: String,
                        completion: @escaping @Sendable (Result<WriteOutcome, StoreError>?) -> Void)

    /// Takes a snapshot now, as ``Store/takeSnapshot(completion:)``. Any thread.
    func takeSnapshot(completion: @escaping @Sendable (Result<Void, JournalError>) -> Void)

    /// Ends the driver's work once the store is closed, as ``Store/close()``. Outside the store's queues.
    func close() throws(JournalError)

    /// Stops as a crash would, as ``Store/abandonForTesting()``. Outside the store's queues.
    func abandon()
}
