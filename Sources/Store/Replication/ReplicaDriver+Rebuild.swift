import DataModel
import Dispatch
import Synchronization

/// A replica that finds its tree is not the log's rebuilds it: it drops what it applied, restores the log's newest
/// snapshot and applies the log again up to the head the log had when the rebuild began, then serves again. Its
/// listeners see one change of the whole tree, from the diverged tree to the rebuilt one; what was submitted
/// meanwhile (tasks, reads) waits, and the answers to its own proposals applied during the rebuild follow that
/// change, as a write's event precedes its acknowledgement.
extension ReplicaDriver {
    /// Starts a rebuild (``Rebuild``); `reason` is for the log's owner. A replica still loading (it has served
    /// nothing yet) or already rebuilding starts over from the snapshot, keeping what it holds for its callers. On
    /// the sequencer.
    func rebuild(_ reason: String) {
        guard !sequencer.isRefusing else { return }
        if replica.catchUp == nil, replica.rebuilding == nil {
            replica.rebuilds += 1
            replica.rebuilding = Rebuild(before: sequencer.state.root, reason: reason)
            rebuilt?(reason)
            askRebuildTarget()
        }
        sequencer.state = LogState(compiler: sequencer.compiler)
        replica.checkpoints.forgetMine()
        replica.treeResets += 1
        replica.appliedPosition = 0
        replica.nodeOrder = NodeOrder()
        replica.undecodable = 0
        restoreLatestSnapshot()
    }

    /// Asks the log's head: the rebuild ends once the replica applied it.
    private func askRebuildTarget() {
        log.lastPosition { [self] result in
            sequencer.queue.async { [self] in
                guard replica.rebuilding != nil else { return }
                guard case .success(let head) = result else {
                    sequencer.queue.asyncAfter(deadline: .now() + 1) { [self] in
                        guard !sequencer.isClosed.load(ordering: .relaxed) else { return }
                        askRebuildTarget()
                    }
                    return
                }
                replica.rebuilding?.target = head
                finishRebuildWhenCaughtUp()
            }
        }
    }

    /// Ends the rebuild once the replica reached its target: one change of the whole tree to the listeners, then
    /// the answers held, the reads and tasks held, in order.
    func finishRebuildWhenCaughtUp() {
        guard let rebuilding = replica.rebuilding, let target = rebuilding.target,
            replica.appliedPosition >= target
        else { return }
        replica.rebuilding = nil
        sequencer.observer?(ChangeRecord(sequence: sequencer.state.sequence,
                                         changes: [Change(path: .root, oldValue: rebuilding.before,
                                                          newValue: sequencer.state.root)]))
        sequencer.endTask()
        for answer in rebuilding.answers { answer() }
        if replica.nodeOrder.isForgotten(proposer) { rejoin() }
        for read in rebuilding.reads { read() }
        advanced(to: replica.appliedPosition)
        runHeldWork()
    }
}

/// A rebuild under way (``ReplicaDriver/rebuild(_:)``).
struct Rebuild {
    /// The tree before the rebuild (what the listeners last saw).
    let before: Node
    let reason: String
    /// The log position to reach (`nil` until the log told its head).
    var target: UInt64?
    /// Answers to this node's proposals applied meanwhile, and reads submitted meanwhile, in order.
    var answers: [() -> Void] = []
    var reads: [() -> Void] = []
}
