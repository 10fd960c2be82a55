/// Journal records framed on the store's sequencer and handed to its ``JournalWriter`` together: one lock and one copy
/// for all the records of a task, however many writes it applied.
///
/// Owned by the sequencer, which reuses the buffer from task to task (``removeAll()`` keeps a moderate
/// capacity), so encoding a record allocates nothing in the common case.
struct FramedRecords {
    /// Buffers above this size are released after use instead of being kept for the next task (1 MiB).
    static let retainedCapacity = 1 << 20

    /// The framed records, back to back, as they go into the journal segment.
    private(set) var writer = BinaryWriter()
    /// Sequence number of the first record, `nil` while empty.
    private(set) var firstSequence: UInt64?

    /// Whether no record was added.
    var isEmpty: Bool { firstSequence == nil }

    /// The framed bytes.
    var bytes: [UInt8] { writer.bytes }

    /// Frames the record with `sequence` (sequences must increase) whose payload `encodePayload` writes.
    mutating func append(sequence: UInt64, payload encodePayload: (inout BinaryWriter) -> Void) {
        if firstSequence == nil { firstSequence = sequence }
        RecordFraming.append(to: &writer, payload: encodePayload)
    }

    /// Forgets every record.
    mutating func removeAll() {
        writer.bytes.removeAll(keepingCapacity: writer.bytes.count <= Self.retainedCapacity)
        firstSequence = nil
    }
}
