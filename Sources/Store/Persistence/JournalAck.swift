import Synchronization

/// What a journal does once a record is durable under the journal's ``FsyncPolicy``.
enum JournalAck: Sendable {
    /// Call the closure (with a failure if the journal could not write the record).
    case single(@Sendable (Result<Void, JournalError>) -> Void)
    /// The record is one shard's part of a multi-shard write: report it to the group, and hold back the
    /// acknowledgements of every later record of this journal until all parts are durable.
    case transactionPart(TransactionDurability)
}

/// Tracks the durability of a multi-shard write whose parts are records in several shards' journals.
///
/// The write is acknowledged when the last part is durable. Until then each participating journal holds back the
/// acknowledgements of the records it appended after its part (an acknowledgement barrier): those writes were
/// applied on top of the multi-shard write, and start-up discards a multi-shard write that is missing from any
/// participant's journal, so acknowledging them first could acknowledge a state that a crash would not reproduce.
final class TransactionDurability: Sendable {
    private struct State {
        var remainingParts: Int
        var failure: JournalError?
        var journals: [JournalWriter] = []
    }

    private let state: Mutex<State>
    private let completion: @Sendable (Result<Void, JournalError>) -> Void

    /// Expects `parts` durable reports, then calls `completion` once.
    init(parts: Int, completion: @escaping @Sendable (Result<Void, JournalError>) -> Void) {
        precondition(parts > 0, "a multi-shard write has at least one part")
        state = Mutex(State(remainingParts: parts))
        self.completion = completion
    }

    /// Whether every part is durable (or one failed; then the barrier is lifted too, and later records are
    /// acknowledged according to their own fate).
    var isSettled: Bool {
        state.withLock { $0.remainingParts == 0 }
    }

    /// Records that `journal` has made its part durable (or failed to; `nil` for a store without persistence,
    /// where a part is settled once applied); the last report completes the write and asks every participating
    /// journal to deliver the acknowledgements it held back.
    func partSettled(in journal: JournalWriter?, result: Result<Void, JournalError>) {
        let finished: (Result<Void, JournalError>, [JournalWriter])? = state.withLock { state in
            if let journal { state.journals.append(journal) }
            if case .failure(let error) = result, state.failure == nil { state.failure = error }
            state.remainingParts -= 1
            guard state.remainingParts == 0 else { return nil }
            let outcome: Result<Void, JournalError> = state.failure.map { .failure($0) } ?? .success(())
            return (outcome, state.journals)
        }
        guard let (outcome, journals) = finished else { return }
        completion(outcome)
        for journal in journals { journal.resumeAcknowledgements() }
    }
}
