import Dispatch
import Synchronization

/// A node cut off from the cluster's log (its NATS connection lost: a partition, every server down).
///
/// It acknowledges nothing: a write is answered once the node applied it from the log, which it cannot reach. What
/// it had appended is retried until stored, so such a write is acknowledged after the cut heals, once. Its replica
/// may be behind what the others acknowledged meanwhile, so every task that arrives while the node is cut off (a
/// write, a `get`, a listen, an onDisconnect registration) waits, in order with those behind it, until the log tells
/// its head again and the replica has applied up to it: no read is answered from a replica that may be behind, and a
/// connection's requests keep their order. Once the cut has lasted ``cutOffNoticeDelay``, the owner is told
/// (``StoreConfiguration/cutOff``), so that clients who can safely go to another node are sent there.
extension ReplicaDriver {
    /// How long the log stays unreachable before the owner is told: a NATS server's restart or kill costs this
    /// node a reconnect to another server (about 0.25 s), not worth moving clients for.
    static let cutOffNoticeDelay = DispatchTimeInterval.seconds(2)

    /// The log became unreachable or reachable again. On the sequencer.
    func reachabilityChanged(_ reachable: Bool) {
        guard !reachable else {
            replica.cutOff = nil
            if toldCutOff.exchange(false, ordering: .relaxed) { cutOffNotice?(false) }
            return
        }
        guard replica.cutOff == nil else { return }
        replica.cutOffs += 1
        let episode = replica.cutOffs
        replica.cutOff = episode
        sequencer.queue.asyncAfter(deadline: .now() + Self.cutOffNoticeDelay) { [self] in
            guard replica.cutOff == episode, !toldCutOff.exchange(true, ordering: .relaxed) else { return }
            cutOffNotice?(true)
        }
    }

    /// Holds `task` (after those already held) until the log tells its head and the replica holds it. On the
    /// sequencer.
    func holdUntilLogHead(_ task: @escaping @Sendable () -> Void) {
        replica.heldWhileCutOff.append(task)
        guard replica.heldWhileCutOff.count == 1 else { return }
        replica.headAskers.append { [self] in runHeldAtLogHead() }
        askForLogHead()
    }

    /// The replica holds a head the log told after every held task came: they run in order (a rebuild begun
    /// meanwhile holds them further).
    private func runHeldAtLogHead() {
        let tasks = replica.heldWhileCutOff
        replica.heldWhileCutOff.removeAll()
        for task in tasks {
            if replica.rebuilding != nil { replica.untilServing.append(task) } else { task() }
        }
    }
}
