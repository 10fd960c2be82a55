/// In the sharded format (read only to migrate it): one journal record of a shard, the operations of one write.
struct ShardRecord: Sendable, Equatable {
    /// The shard's record sequence number (1, 2, 3, … without gaps).
    let sequence: UInt64
    /// Set when the record is this shard's part of a multi-shard write.
    let transaction: TransactionTag?
    /// The operations.
    let operations: [ShardOperation]
}

/// Identifies a multi-shard write in each participant's journal, so start-up can tell whether every part of it
/// reached disk.
struct TransactionTag: Sendable, Equatable {
    /// Namespace-wide transaction number, increasing in the order multi-shard operations were submitted.
    let id: UInt64
    /// Indexes of the participating shards, ascending.
    let participants: [Int]
}
