/// Records appended to a ``JournalWriter`` but not yet taken by a flush pass (guarded by the journal's mutex).
struct PendingRecords {
    var open = PendingBatch()
    /// Batches closed by a rotation marker, oldest first.
    var sealed: [PendingBatch] = []
    var flushScheduled = false
    var failure: JournalError?
    /// The full-disk error while the flush queue holds records waiting for space.
    var outOfSpace: JournalError?
    /// Bytes appended since the journal was opened (snapshot trigger).
    var appendedBytes = 0
    /// An empty buffer with capacity, from a batch already written, for the next batch.
    var spare: [UInt8] = []
}

/// Framed records that go into one segment, optionally followed by a rotation.
struct PendingBatch {
    /// Written buffers up to this capacity are reused (4 MiB).
    static let retainedCapacity = 4 << 20

    var bytes: [UInt8] = []
    var acks: [JournalAck] = []
    var firstSequence: UInt64?
    /// Start a new segment with this first sequence after writing `bytes`.
    var rotation: UInt64?

    var isEmpty: Bool { firstSequence == nil && acks.isEmpty && rotation == nil }

    /// Adds `records` (possibly none, for a barrier) and their acknowledgement; a batch's first records go into
    /// `spare` when it is the larger buffer, which saves regrowing one on every pass.
    mutating func add(_ records: FramedRecords, ack: @escaping JournalAck, spare: inout [UInt8]) {
        if let first = records.firstSequence {
            if bytes.isEmpty && spare.capacity > bytes.capacity { swap(&bytes, &spare) }
            bytes.append(contentsOf: records.bytes)
            if firstSequence == nil { firstSequence = first }
        }
        acks.append(ack)
    }
}
