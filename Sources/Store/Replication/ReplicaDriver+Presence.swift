import Dispatch

/// Cluster mode's presence: heartbeats while this node has armed onDisconnect writes, and declaring silent nodes
/// down so that a survivor runs their armed writes.
extension ReplicaDriver {
    /// Starts the once-a-second presence work (once): heartbeats while this node has armed writes, and a
    /// `nodeDown` proposal for any node with armed writes silent for ``ClusterTiming/silenceMilliseconds``
    /// (``presenceTick()``).
    func startPresenceTimer() {
        guard replica.presenceTimer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: sequencer.queue)
        timer.schedule(deadline: .now() + ClusterTiming.heartbeatSeconds, repeating: ClusterTiming.heartbeatSeconds)
        timer.setEventHandler { [weak self] in self?.presenceTick() }
        timer.resume()
        replica.presenceTimer = timer
    }

    /// Heartbeats, and failure detection: a node is silent once this replica has seen its last-heard entry stay
    /// the same for ``ClusterTiming/silenceMilliseconds`` of this node's monotonic clock; the `nodeDown` proposal
    /// names that entry, so it takes effect only if the node said nothing after it. Neither side reads a wall
    /// clock: the entries' times follow the proposers' clocks (never going back), and one clock that jumps ahead
    /// would otherwise make every node look silent to it, or hold the log's time so far ahead that no node looks
    /// silent until real time catches up.
    private func presenceTick() {
        guard refusal() == nil, replica.catchUp == nil, replica.rebuilding == nil else { return }
        let me = proposer
        if sequencer.state.presence.armed[me] != nil {
            propose([.heartbeat(node: me)]) { _ in }
        }
        let now = DispatchTime.now().uptimeNanoseconds
        let silenceNanoseconds = UInt64(ClusterTiming.silenceMilliseconds * 1_000_000)
        let watched = sequencer.state.presence.nodesWithArmedWrites.filter { $0 != me }
        replica.silences = replica.silences.filter { watched.contains($0.key) }
        for node in watched {
            let heard = sequencer.state.presence.lastHeard[node] ?? 0
            guard let silence = replica.silences[node], silence.lastHeard == heard else {
                replica.silences[node] = (heard, now)
                continue
            }
            guard now >= silence.since + silenceNanoseconds, !replica.downProposed.contains(node) else { continue }
            replica.downProposed.insert(node)
            propose([.nodeDown(node, lastHeard: heard)]) { [self] _ in
                sequencer.queue.async { [self] in replica.downProposed.remove(node) }
            }
        }
    }
}

/// How quickly a cluster notices a dead node.
public enum ClusterTiming {
    /// A node with armed onDisconnect writes appends a heartbeat this often.
    public static let heartbeatSeconds = 1.0
    /// A node silent this long in the log, as a survivor's monotonic clock measures it, is gone: its armed
    /// onDisconnect writes run (5 s, several missed heartbeats; the bound on firing is this plus one heartbeat
    /// period plus the log's latency).
    public static let silenceMilliseconds = 5_000.0
}
