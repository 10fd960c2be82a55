import Dispatch

/// One shard: a serial queue and everything it owns.
///
/// Work reaches a shard only as tasks in its queue, in submission order. A multi-shard operation *holds* the shards
/// it involves: its first task on each of them marks the shard held and captures its state; while held, the shard
/// parks every later task in a backlog (reads included, so that every task runs in submission order) until the
/// operation's commit task, which is sent straight to the queue, installs the new state and releases the shard.
/// No thread ever blocks waiting for another shard: a held shard's queue keeps running and only defers tasks.
///
/// Deadlock freedom: multi-shard operations enqueue their first task on all their shards while holding one
/// submission lock (``Store``), so every shard sees them in the same global order; an operation waits only for its
/// own first tasks, which can be parked only behind operations that come earlier in that order.
final class Shard: @unchecked Sendable {
    // Every `var` below is owned by `queue`.

    /// The shard's index in the layout.
    let index: Int
    /// The serial queue that owns the shard.
    let queue: DispatchQueue
    /// The shard's journal, `nil` for a store without persistence.
    let journal: JournalWriter?
    /// The shard's tree slice, wide state and record sequence.
    var state: ShardState
    /// Journal records framed by the current task and not yet handed to the journal (reused between tasks).
    var records = FramedRecords()
    /// `[index]`: the participants of every single-shard change record, allocated once.
    let soloParticipants: [Int]
    /// Whether a multi-shard operation holds the shard.
    private var isHeld = false
    /// Tasks submitted while held, in submission order, from `backlogHead` on.
    private var backlog: [@Sendable () -> Void] = []
    private var backlogHead = 0

    init(index: Int, state: ShardState, journal: JournalWriter?, label: String) {
        self.index = index
        self.state = state
        self.journal = journal
        soloParticipants = [index]
        queue = DispatchQueue(label: label)
    }

    /// Runs `task` on the queue after every task submitted before it (from any thread).
    func submit(_ task: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            if isHeld || backlogHead < backlog.count {
                backlog.append(task)
            } else {
                task()
            }
        }
    }

    /// Marks the shard held; called by a multi-shard operation's first task.
    func hold() {
        dispatchPrecondition(condition: .onQueue(queue))
        precondition(!isHeld, "a shard is held by one multi-shard operation at a time")
        isHeld = true
    }

    /// Releases the hold and runs parked tasks until one of them holds the shard again.
    func release() {
        dispatchPrecondition(condition: .onQueue(queue))
        isHeld = false
        while !isHeld && backlogHead < backlog.count {
            let task = backlog[backlogHead]
            backlogHead += 1
            task()
        }
        if backlogHead == backlog.count {
            backlog.removeAll(keepingCapacity: backlog.count <= 1024)
            backlogHead = 0
        }
    }
}
