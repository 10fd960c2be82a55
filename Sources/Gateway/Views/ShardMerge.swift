import Store

/// Merges the change streams of every shard into one order for a wide view.
///
/// Each shard reports its own records in apply order, and a multi-shard write is reported by each participant at
/// its own place in that shard's order. Applying such a write when the first participant reports it could undo a
/// write another participant applied just before it (its record may still be on the way). So a shard's records
/// queue up behind a multi-shard write until every participant has reached it; then it is applied once. Single-shard
/// records ahead of it flow freely. Multi-shard writes are globally ordered by the store, so this never waits forever.
struct ShardMerge {
    /// Whether the view's initial read has passed each shard (records before that are already in the value).
    private var accepted: [Bool]
    /// Records of each shard not yet applied, in that shard's order.
    private var queues: [[ChangeRecord]]
    /// The next unapplied record of each queue.
    private var heads: [Int]

    init(shardCount: Int) {
        accepted = Array(repeating: false, count: shardCount)
        queues = Array(repeating: [], count: shardCount)
        heads = Array(repeating: 0, count: shardCount)
    }

    /// The view's initial read has passed `shard`: its later records count.
    mutating func accept(_ shard: Int) {
        guard accepted.indices.contains(shard) else { return }
        accepted[shard] = true
    }

    /// Queues a record; returns whether it was taken (its shard is accepted).
    mutating func enqueue(_ record: ChangeRecord) -> Bool {
        guard accepted.indices.contains(record.shard), accepted[record.shard] else { return false }
        queues[record.shard].append(record)
        return true
    }

    /// The next record that can be applied, removing it (from every participant's queue for a multi-shard write);
    /// `nil` when every queue is empty or waiting for a participant.
    mutating func nextReady() -> ChangeRecord? {
        for shard in queues.indices {
            guard let head = head(of: shard) else { continue }
            guard let transaction = head.transaction else {
                advance(shard)
                return head
            }
            let ready = head.participants.allSatisfy { participant in
                self.head(of: participant)?.transaction == transaction
            }
            if ready {
                for participant in head.participants { advance(participant) }
                return head
            }
        }
        return nil
    }

    private func head(of shard: Int) -> ChangeRecord? {
        guard queues.indices.contains(shard), heads[shard] < queues[shard].count else { return nil }
        return queues[shard][heads[shard]]
    }

    private mutating func advance(_ shard: Int) {
        heads[shard] += 1
        if heads[shard] == queues[shard].count {
            queues[shard].removeAll(keepingCapacity: true)
            heads[shard] = 0
        }
    }
}
