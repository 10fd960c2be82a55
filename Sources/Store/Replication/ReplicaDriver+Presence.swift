import Dispatch

/// Cluster mode's presence: heartbeats while this node has armed onDisconnect writes, and declaring silent nodes
/// down so that a survivor runs their armed writes.
extension ReplicaDriver {
    /// Starts the once-a-second presence work (once): heartbeats while this node has armed writes, and a
    /// `nodeDown` proposal for any node with armed writes silent for ``ClusterTiming/silenceMilliseconds``.
    func startPresenceTimer() {
        guard replica.presenceTimer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: sequencer.queue)
        timer.schedule(deadline: .now() + ClusterTiming.heartbeatSeconds, repeating: ClusterTiming.heartbeatSeconds)
        timer.setEventHandler { [weak self] in self?.presenceTick() }
        timer.resume()
        replica.presenceTimer = timer
    }

    private func presenceTick() {
        guard refusal() == nil, replica.catchUp == nil, replica.rebuilding == nil else { return }
        let me = proposer
        if sequencer.state.presence.armed[me] != nil {
            propose([.heartbeat(node: me)]) { _ in }
        }
        let now = max(sequencer.state.timestamp, sequencer.clock())
        for node in sequencer.state.presence.nodesWithArmedWrites where node != me && !replica.downProposed.contains(node) {
            let heard = sequencer.state.presence.lastHeard[node] ?? 0
            guard heard + ClusterTiming.silenceMilliseconds <= now else { continue }
            replica.downProposed.insert(node)
            propose([.nodeDown(node, silentFor: ClusterTiming.silenceMilliseconds)]) { [self] _ in
                sequencer.queue.async { [self] in replica.downProposed.remove(node) }
            }
        }
    }
}

/// How quickly a cluster notices a dead node.
public enum ClusterTiming {
    /// A node with armed onDisconnect writes appends a heartbeat this often.
    public static let heartbeatSeconds = 1.0
    /// A node silent this long in the log is gone: its armed onDisconnect writes run (5 s, several missed
    /// heartbeats; the bound on firing is this plus one heartbeat period plus the log's latency).
    public static let silenceMilliseconds = 5_000.0
}
