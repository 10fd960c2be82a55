import CNats
import Dispatch
import Synchronization

/// Reading: while following passes nothing and the stream is known to hold more, the log reads the missing entries
/// from the stream's leader by position (`STREAM.MSG.GET`, which only the stream's leader answers), through the
/// leader gate, and hands them on as a consumer's would be.
///
/// Following needs a consumer on the stream's leader, and JetStream places a one-replica consumer where it likes.
/// After a partition heals, NATS 2.9 was seen placing every new consumer, for 40 s, on the two servers that did not
/// lead: one whose copy had diverged and ended short, which delivered nothing, and one other (docs/reliability.md).
/// Reads do not depend on placement. Consumers stay: once one passes, it delivers far faster than reads, one
/// round trip an entry.
extension JetStreamLog {
    /// Starts reading from the leader when nothing passed for ``followStallSeconds`` while the stream is known to
    /// hold more, unless a read runs (from the log's timer).
    func readFromLeaderIfStalled() {
        let now = Self.now()
        guard following.withLock({ $0.startReading(at: now, after: Self.followStallSeconds) }) else { return }
        leaderReads.async { [weak self] in self?.readFromLeader() }
    }

    /// Reads and hands on entries from the one after the last delivered, until the leader has no next entry (the
    /// end of its copy, or one removed below a snapshot: a consumer delivers past such a gap), does not answer, or
    /// the gate stops it.
    private func readFromLeader() {
        defer { following.withLock { $0.endReading() } }
        let questions = gateQuestions()
        var first: UInt64?
        var last: UInt64 = 0
        // The context is asked for each time: a log that closes lets go of it, and waits for this read to end.
        while let position = following.withLock({ $0.isHalted ? nil : $0.delivered + 1 }),
            let context = openContext(), let entry = readEntry(at: position, context: context)
        {
            let verdict = gate.admitRead(position: position, id: entry.id, asking: questions)
            guard verdict == .pass else {
                leaderDisagrees(verdict)
                break
            }
            let passed = admission.withLock { _ -> Bool in
                guard following.withLock({ $0.read(position, at: Self.now()) }) else { return false }
                deliver.withLock { $0 }?(position, entry.payload)
                handedOn(entry.id, at: position)
                return true
            }
            guard passed else { break }
            first = first ?? position
            last = position
        }
        if let first { cluster.report(.readFromLeader(namespace: namespace, first: first, last: last)) }
    }

    /// The entry at `position` as the answering leader holds it; `nil` when there is none or no answer came.
    private func readEntry(at position: UInt64, context: OpaquePointer) -> (id: String, payload: [UInt8])? {
        var message: OpaquePointer?
        guard canopy_js_get(&message, context, stream, position) == NATS_OK, let message else { return nil }
        defer { natsMsg_Destroy(message) }
        return (String(cString: canopy_msg_id(message)), Self.data(of: message))
    }
}
