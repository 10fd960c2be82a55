import CNats
import Synchronization

/// Marks: each replica announces the last entry it applied, twice a second while it changes, on the namespace's
/// core NATS subject `canopy.applied.<hex name>` (not stored: only the replicas running hear it), as
/// `<node> <position> <message id>`, or `<node> 0 -` when it moved back to rebuild (its mark withdrawn). The leader
/// gate checks a leader against the other replicas' marks ahead of its own (``PeerMarks``).
extension JetStreamLog {
    /// The longest node name or message id an announcement may carry.
    static let markFieldLimit = 256

    /// Announces the last entry handed on, unless it was announced already (from the log's timer).
    func announceApplied() {
        let mark = lastHanded.withLock { last -> (position: UInt64, id: String)? in
            guard !last.announced else { return nil }
            last.announced = true
            return (last.position, last.id)
        }
        guard let mark else { return }
        let text = "\(cluster.node) \(mark.position) \(mark.id)"
        _ = natsConnection_PublishString(cluster.connection, appliedSubject, text)
    }

    /// Hears the other replicas' marks and tells the gate.
    func listenForPeersApplied() {
        let node = cluster.node
        let subscription = MessageListener.subscribe(cluster.connection, appliedSubject) { [weak self] data in
            let fields = data.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
            guard fields.count == 3, let self, let position = UInt64(String(decoding: fields[1], as: UTF8.self))
            else { return }
            // Names and message ids are short; anything longer is not a replica's announcement.
            let lengths = 1...Self.markFieldLimit
            guard lengths.contains(fields[0].count), lengths.contains(fields[2].count) else { return }
            let peer = String(decoding: fields[0], as: UTF8.self)
            guard peer != node else { return }
            gate.peerApplied(node: peer, position: position, id: String(decoding: fields[2], as: UTF8.self),
                             at: Self.now())
            learned(head: position)
        }
        if let subscription { handles.withLock { $0.listeners.append(subscription) } }
    }
}
