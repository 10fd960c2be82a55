import Store

/// Appends JetStream acknowledged that the log has not delivered yet, by the position the acknowledgement named.
///
/// JetStream acknowledges an append once a majority of the stream's servers stored it, yet NATS 2.9.10 can then
/// elect a leader whose copy lacks it (docs/reliability.md, "An acknowledged append missing from the leader's
/// copy"). Replicas follow only the leader's copy, so such an append would never be applied, and every later
/// proposal of its node would wait for it (`NodeOrder`): that node would answer no write and no read again. So an
/// append stays here, with its payload, until the log delivers its position: with its id, it is confirmed; with
/// another id, it is lost, and the log publishes it again under its own id (replicas ignore a proposal they already
/// applied). An acknowledgement may also arrive after its position was delivered: the ids of the last
/// ``recentCapacity`` positions delivered are kept for it.
struct UnconfirmedAppends {
    struct Append {
        let id: String
        let payload: [UInt8]
        /// Whom to tell if the log closes before it is published again and acknowledged (``ReplicatedLog``).
        let failed: @Sendable (ReplicationError) -> Void
    }

    /// How many of the last positions delivered keep their ids.
    static let recentCapacity = 1024

    /// By the position JetStream acknowledged them at.
    private(set) var byPosition: [UInt64: Append] = [:]
    /// The ids of the last positions delivered, each at its position modulo the capacity.
    private var recent = [(position: UInt64, id: String)](repeating: (0, ""), count: recentCapacity)
    /// The highest position delivered so far.
    private var delivered: UInt64 = 0

    /// JetStream acknowledged `append` at `position`. Returns it when it is already known lost (the log delivered
    /// another id there); an append whose position was delivered longer ago is not checked.
    mutating func acknowledged(_ append: Append, at position: UInt64) -> Append? {
        guard position <= delivered else {
            byPosition[position] = append
            return nil
        }
        let seen = recent[Int(position % UInt64(Self.recentCapacity))]
        return seen.position == position && seen.id != append.id ? append : nil
    }

    /// The log delivered `id` at `position`: the appends to publish again (acknowledged there under another id).
    /// Appends acknowledged below `position` that were not delivered are dropped: the positions between were
    /// removed below a snapshot, which holds them.
    mutating func delivered(_ id: String, at position: UInt64) -> [Append] {
        delivered = max(delivered, position)
        recent[Int(position % UInt64(Self.recentCapacity))] = (position, id)
        guard !byPosition.isEmpty else { return [] }
        var lost: [Append] = []
        for (acknowledgedAt, append) in byPosition where acknowledgedAt <= position {
            byPosition[acknowledgedAt] = nil
            if acknowledgedAt == position && append.id != id { lost.append(append) }
        }
        return lost
    }

    /// Forgets every append (the log closes).
    mutating func removeAll() {
        byPosition.removeAll()
    }
}
