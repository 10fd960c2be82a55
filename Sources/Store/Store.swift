import DataModel
import Dispatch
import Synchronization

/// One namespace's tree and its log: every write, rules change and read takes effect in one order.
///
/// - **One sequencer.** All work reaches the store as tasks on one serial queue, the sequencer, in submission
///   order. A write is given its place in the namespace's log there (a ``LogEntry``: sequence number, server time,
///   caller, rules version) and applied at once by ``LogState/apply(_:isReplay:)``, a pure function of the state
///   and the entry: compare-and-set, server values, push ids and the rules' decision all derive from the entry and
///   the tree every earlier entry built. Reads and listen registrations (``inOrder(publishing:_:)``) run on the same queue,
///   so a read submitted after a write sees it, and a caller that submits from one thread (a connection's event
///   loop) has its requests take effect in the order it sent them.
/// - **Change records.** The observer gets a ``ChangeRecord`` for every applied write, on the sequencer, in log
///   order, before the write's completion (so events can go out before the acknowledgement); `afterTask` runs at the
///   end of every sequencer turn that applied writes, before their completions (to hand a turn's events off at
///   once). A turn runs every task waiting when it starts; under load it carries many connections' writes.
///   Readers that need no
///   place in the order can use ``current`` while nothing was sequenced since it was taken.
/// - **Durability.** On a single node with persistence, every entry — rejected writes included, so that replay re-takes every
///   decision — goes to the namespace's journal, group-committed; a write's completion runs when its entry is
///   durable under the ``FsyncPolicy``, in log order. Snapshots of the state bound the replay at start-up.
/// - **Throughput** comes from batching, not from racing: ``write(batch:by:completion:)`` sequences a connection's
///   pipelined writes in one task, and their entries share one group commit.
///
/// - **One driver.** Where entries get their place and become durable is the store's ``LogDriver``, chosen once
///   from the configuration: a single node's journal (`JournalDriver`), or a cluster's replicated log
///   (`ReplicaDriver`, with ``StoreConfiguration/replication``). Every operation below works the same in both.
///
/// | Owner | State |
/// |---|---|
/// | the sequencer's queue | the log state; the driver's state (journal handle and framed records, or the replica's) |
/// | a mutex of the sequencer | the state a publishing ``inOrder(publishing:_:)`` task last saw, for readers that need no place in the order |
///
/// The API is callback based; completions and observer calls run on store-owned queues and must not block.
public final class Store: @unchecked Sendable {
    /// What start-up found (empty for an in-memory store, and until a background load finished).
    public var loadReport: LoadReport { sequencer.report.withLock { $0 } }

    let sequencer: Sequencer
    /// Chosen once, at construction.
    let driver: any LogDriver

    /// Opens a store and loads it before returning: in memory, from its namespace directory (state snapshot,
    /// journal replay), or by catching up with the cluster's log.
    ///
    /// - Throws: ``JournalError`` when the directory is locked by another process or its files are damaged, or the
    ///   cluster's log could not be read.
    public convenience init(configuration: StoreConfiguration, observer: (@Sendable (ChangeRecord) -> Void)? = nil)
        throws(JournalError)
    {
        self.init(unloaded: configuration, observer: observer, afterTask: nil)
        let driver = self.driver
        sequencer.queue.async { driver.load { _ in } }
        if let failure = waitUntilLoaded() { throw failure }
    }

    /// Opens a store whose loading runs on its sequencer, off the caller's thread: everything submitted meanwhile
    /// waits behind it. `loaded` runs on the sequencer once loading ended (with the failure, after which every
    /// operation is refused). `observer` gets every applied write's record and `afterTask` the end of every turn
    /// that applied writes, both on the sequencer.
    public static func opening(configuration: StoreConfiguration,
                               observer: (@Sendable (ChangeRecord) -> Void)? = nil,
                               afterTask: (@Sendable () -> Void)? = nil,
                               loaded: @escaping @Sendable (Result<LoadReport, JournalError>) -> Void) -> Store
    {
        let store = Store(unloaded: configuration, observer: observer, afterTask: afterTask)
        let driver = store.driver
        store.sequencer.queue.async { driver.load(loaded: loaded) }
        return store
    }

    private init(unloaded configuration: StoreConfiguration, observer: (@Sendable (ChangeRecord) -> Void)?,
                 afterTask: (@Sendable () -> Void)?)
    {
        sequencer = Sequencer(configuration: configuration, observer: observer, afterTask: afterTask)
        if let log = configuration.replication {
            driver = ReplicaDriver(sequencer: sequencer, log: log, configuration: configuration)
        } else {
            driver = JournalDriver(sequencer: sequencer, configuration: configuration)
        }
    }

    /// Blocks until the store loaded; returns why it could not (never call it on the sequencer or an event loop).
    public func waitUntilLoaded() -> JournalError? {
        sequencer.waitUntilLoaded()
    }

    /// Whether the namespace loaded (false while loading, and for good after a failure).
    public var isLoaded: Bool { sequencer.isLoaded }

    /// Whether loading failed: every operation is refused for good.
    public var hasFailed: Bool { sequencer.hasFailed }

    /// Cluster mode: whether this node has been cut off from the cluster's log for a while
    /// (``StoreConfiguration/cutOff``); it acknowledges nothing and answers no read until it reaches the log again.
    public var isCutOff: Bool { driver.isCutOff }

    /// The state as the last publishing ``inOrder(publishing:_:)`` task saw it, when nothing was sequenced since;
    /// `nil` otherwise (then read in order, publishing). It holds every write whose completion ran, so a reader that
    /// needs no place in the order (one whose earlier requests were all answered) can use it without a hop to the
    /// sequencer. Published only by such readers: other workloads never share the tree (which would make the next
    /// write copy its path). Always `nil` in a cluster: another node may have acknowledged writes this replica has
    /// not applied yet (read with ``inOrderAtLogHead(publishing:_:)``).
    public var current: StoreSnapshot? { sequencer.published }

    /// Whether the store is a replica of a cluster's log: then an in-order read holds every write this node submitted
    /// before it, but maybe not every write other nodes acknowledged (its replica may lag, or follow a NATS server
    /// cut off from the others). A reader that must see those waits for the log's head first
    /// (``awaitLogHead(resumingOn:_:)``).
    public var isReplica: Bool { !driver.publishesCurrent }

    // MARK: - The sequencer

    /// Runs `body` on the sequencer after everything submitted before, with the state as it is there.
    ///
    /// This is how a caller takes its place in the order without writing: a listen registers its view, a `get`
    /// reads, an onDisconnect registration is judged, each against a tree that holds every write submitted before
    /// it (in a cluster, every write this node submitted before it). `body` must be quick and must not block (hand
    /// longer work to another queue). With `publishing`, the state also becomes ``current`` for later readers.
    public func inOrder(publishing: Bool = false, _ body: @escaping @Sendable (StoreSnapshot) -> Void) {
        submit { [self] in
            driver.runRead { [self] in
                let snapshot = sequencer.snapshot()
                if publishing, snapshot.isAvailable, driver.publishesCurrent { sequencer.publish(snapshot) }
                body(snapshot)
            }
        }
    }

    /// Runs `body` like ``inOrder(publishing:_:)``, at a place after every write any node acknowledged before the
    /// call (``awaitLogHead(resumingOn:_:)``): a reader that has no earlier request of its own in the order (a REST
    /// read) never sees older data than a node acknowledged to it before, whichever node answers.
    public func inOrderAtLogHead(publishing: Bool = false, _ body: @escaping @Sendable (StoreSnapshot) -> Void) {
        driver.awaitLogHead(resumingOn: { $0() }) { [self] in inOrder(publishing: publishing, body) }
    }

    /// Runs `then` once this node holds every write any node acknowledged before the call, so that a client that
    /// reconnects here from another node never goes back in time. On a single node that is at once, on the
    /// caller's thread; in a cluster, once this replica applied everything the log held when called, by passing
    /// `then` to `hop` (from a store queue; the caller's way back to its own thread). Callers that arrive while the
    /// log is being asked share the next question, so a namespace has at most two in flight however many wait.
    public func awaitLogHead(resumingOn hop: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
                             _ then: @escaping @Sendable () -> Void)
    {
        driver.awaitLogHead(resumingOn: hop, then)
    }

    /// Runs `body` on the sequencer after everything submitted before. A clustered store that has not caught up
    /// with its log yet holds it until it has (in submission order), so nothing is proposed or answered before
    /// the replica holds everything the log held when it opened. `joinsTurn`: a write, whose turn may end with
    /// its neighbours' (``Sequencer/runTurn(driver:)``).
    func submit(joinsTurn: Bool = false, _ body: @escaping @Sendable () -> Void) {
        sequencer.submit(joinsTurn: joinsTurn, body, driver: driver)
    }
}
