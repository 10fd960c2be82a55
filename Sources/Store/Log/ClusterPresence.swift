import DataModel

/// Cluster mode's part of a namespace's state: where in the log each node was last heard from, and the
/// onDisconnect writes each node's connections armed. Kept by every replica from the log, so any survivor's
/// replica runs a dead node's writes at the same place in the order.
public struct ClusterPresence: Sendable, Equatable {
    /// The sequence number of each node's latest entry (arming, disarming or running a write, or a heartbeat).
    public internal(set) var lastHeard: [String: UInt64] = [:]
    /// The armed onDisconnect writes, by node, then by connection.
    public internal(set) var armed: [String: [String: StoreWrite]] = [:]

    /// The nodes with armed writes.
    public var nodesWithArmedWrites: [String] { armed.keys.sorted() }

    /// The writes `node` armed, as one update at the root: its connections in order of their ids, each one's
    /// entries in its order (an armed write is an update at the root, as ``StoreWrite`` builds for onDisconnect).
    func combinedWrite(of node: String) -> StoreWrite? {
        guard let sessions = armed[node], !sessions.isEmpty else { return nil }
        var entries: [UpdateEntry] = []
        for session in sessions.keys.sorted() {
            guard let write = sessions[session] else { continue }
            switch write {
            case .update(let base, let updates):
                entries += updates.map { UpdateEntry(target: $0.target.below(base), value: $0.value) }
            case .set(let target, let value, _):
                entries.append(UpdateEntry(target: target, value: value))
            case .push:
                continue
            }
        }
        return .update(.root, entries)
    }
}
