import DataModel
import Dispatch
import Primitives
import Synchronization

/// A namespace's sequencer: the serial queue that owns its ``LogState``, and what every ``LogDriver`` shares
/// around it: the observer, the clock, loading, and the state published for readers that need no place in the order.
///
/// | Owner | State |
/// |---|---|
/// | `queue` | ``state``, ``loadFailure`` |
/// | `publishedSnapshot` mutex | the state a publishing ``Store/inOrder(publishing:_:)`` task last saw |
/// | `report` mutex | what loading found |
final class Sequencer: @unchecked Sendable {
    let queue = DispatchQueue(label: "canopy.store.sequencer")
    let observer: (@Sendable (ChangeRecord) -> Void)?
    let afterTask: (@Sendable () -> Void)?
    let clock: @Sendable () -> Double
    let compiler: RulesCompiler?
    let isClosed = Atomic<Bool>(false)
    let report = Mutex(LoadReport())
    /// Left once loading ended (successfully or not); ``waitUntilLoaded()`` waits for it.
    private let loading = DispatchGroup()
    /// The state the last publishing task saw; current while its sequence is ``appliedSequence``.
    private let publishedSnapshot = Mutex<StoreSnapshot?>(nil)
    /// The sequence number of the last entry applied, stored at the end of each task before its completions run.
    private let appliedSequence = Atomic<UInt64>(0)
    /// Rules changes submitted and not yet in force: while any is, ``published`` serves nobody, since the caller
    /// that changed the rules may already have been answered.
    let rulesChangesPending = Atomic<Int>(0)
    /// Whether loading succeeded, or failed (both stay false while it runs).
    private let loaded = Atomic<Bool>(false)
    private let failed = Atomic<Bool>(false)
    /// Tasks submitted and not run yet, in submission order, and whether a turn to run them is on `queue`.
    private let inbox = Mutex(TaskInbox())

    // Owned by `queue`:
    /// The namespace as the log built it.
    var state: LogState
    /// Why the namespace could not be loaded; every later operation fails.
    private(set) var loadFailure: JournalError?

    init(configuration: StoreConfiguration, observer: (@Sendable (ChangeRecord) -> Void)?,
         afterTask: (@Sendable () -> Void)?)
    {
        self.observer = observer
        self.afterTask = afterTask
        clock = configuration.clock
        compiler = configuration.rulesCompiler
        state = LogState(compiler: configuration.rulesCompiler)
        loading.enter()
    }

    // MARK: - Loading

    /// Ends loading with `error`: every later operation is refused. On the sequencer.
    func fail(loading error: JournalError) {
        loadFailure = error
        isClosed.store(true, ordering: .relaxed)
        failed.store(true, ordering: .releasing)
        loading.leave()
    }

    /// Ends a successful load: the store serves from now on. On the sequencer.
    func finishLoading() {
        appliedSequence.store(state.sequence, ordering: .releasing)
        loaded.store(true, ordering: .releasing)
        loading.leave()
    }

    /// Blocks until loading ended; returns why it failed (never call it on the sequencer or an event loop).
    func waitUntilLoaded() -> JournalError? {
        loading.wait()
        return queue.sync { loadFailure }
    }

    var isLoaded: Bool { loaded.load(ordering: .acquiring) }
    var hasFailed: Bool { failed.load(ordering: .acquiring) }

    /// Why nothing can be sequenced, whatever the driver: the namespace did not load, or the store is closed.
    var isRefusing: Bool { loadFailure != nil || isClosed.load(ordering: .relaxed) }

    // MARK: - Turns

    /// Adds `body` to the tasks waiting for the sequencer, after everything submitted before; schedules a turn on
    /// `queue` when none is scheduled. `joinsTurn`: the task may share its turn's end with the tasks around it
    /// (see ``runTurn(driver:)``). Any thread.
    func submit(joinsTurn: Bool, _ body: @escaping @Sendable () -> Void, driver: any LogDriver) {
        let schedules = inbox.withLock { inbox in
            inbox.tasks.append(SequencerTask(joinsTurn: joinsTurn, body: body))
            if inbox.turnScheduled { return false }
            inbox.turnScheduled = true
            return true
        }
        if schedules { HandOffBatch.async({ [self] in runTurn(driver: driver) }, on: queue) }
    }

    /// Runs every task waiting when the turn starts, in order. Tasks that join turns (writes) share one end of
    /// turn (``LogDriver/endTurn()``): one hand-off of their events to each event loop, one journal append, their
    /// completions after both. Under load many connections' writes wait together, so a subscriber gets the
    /// frames of many writes in one flush; alone, a write ends its turn at once, so nothing waits for company.
    /// Any other task (a read, a listen, rules, onDisconnect) ends the turn before it and after it, so it sees and
    /// hands on exactly what it did before turns were shared. Tasks submitted meanwhile get the next turn, queued
    /// behind whatever else is on `queue`.
    private func runTurn(driver: any LogDriver) {
        HandOffBatch.run { runTasks(driver: driver) }
        let schedulesNext = inbox.withLock { inbox in
            if inbox.tasks.isEmpty { inbox.turnScheduled = false }
            return inbox.turnScheduled
        }
        if schedulesNext { queue.async { [self] in runTurn(driver: driver) } }
    }

    /// The body of a turn, inside a ``HandOffBatch``: what it hands the loops (answers, and acknowledgements in
    /// memory) leaves once per loop; events leave at the end of each task that made them (``endTask()``).
    private func runTasks(driver: any LogDriver) {
        let tasks = inbox.withLock { inbox in
            let waiting = inbox.tasks
            inbox.tasks = []
            return waiting
        }
        for task in tasks {
            if task.joinsTurn {
                driver.run(task.body)
            } else {
                driver.endTurn()
                driver.run(task.body)
                driver.endTurn()
            }
        }
        driver.endTurn()
    }

    // MARK: - Tasks

    /// The state as a task sees it now; `now` is the server time, never before the last entry's.
    func snapshot() -> StoreSnapshot {
        StoreSnapshot(root: state.root, sequence: state.sequence, now: max(state.timestamp, clock()),
                      rules: state.rules, policy: state.policy, isAvailable: loadFailure == nil)
    }

    /// Makes `snapshot` the state readers without a place in the order may use (``published``).
    func publish(_ snapshot: StoreSnapshot) {
        publishedSnapshot.withLock { $0 = snapshot }
    }

    /// The published state, when nothing was sequenced since it was taken and no rules change waits.
    var published: StoreSnapshot? {
        guard rulesChangesPending.load(ordering: .acquiring) == 0,
            let snapshot = publishedSnapshot.withLock({ $0 }),
            snapshot.sequence == appliedSequence.load(ordering: .acquiring)
        else { return nil }
        return snapshot
    }

    /// Ends a task that applied entries: marks its state applied (so ``published`` no longer serves an older
    /// one) and tells `afterTask`, before any of the task's completions run. On the sequencer.
    func endTask() {
        appliedSequence.store(state.sequence, ordering: .releasing)
        afterTask?()
        // The task's events are on their way before its entries reach the journal (or another node's log): an
        // acknowledgement, which comes back from there, never overtakes them.
        HandOffBatch.sendNow()
    }
}

/// A task submitted to a ``Sequencer``.
struct SequencerTask {
    /// Whether it may share its turn's end with the tasks around it (a write).
    let joinsTurn: Bool
    let body: @Sendable () -> Void
}

/// The tasks waiting for a sequencer's next turn.
struct TaskInbox {
    var tasks: [SequencerTask] = []
    var turnScheduled = false
}

/// The state of a store as one task on its sequencer saw it.
public struct StoreSnapshot: Sendable {
    /// The whole tree.
    public let root: Node
    /// The sequence number of the last entry applied.
    public let sequence: UInt64
    /// The server time for rules that read `now` (milliseconds since the Unix epoch, never before the last entry's).
    public let now: Double
    /// The rules revision in force.
    public let rules: RulesRevision
    /// The compiled rules in force (`nil`: none).
    public let policy: (any AuthorizationPolicy)?
    /// Whether the namespace loaded (otherwise every operation fails and the tree is empty).
    public let isAvailable: Bool
}
