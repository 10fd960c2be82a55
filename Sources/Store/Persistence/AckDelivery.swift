import Dispatch

/// Runs a journal's acknowledgements in append order on a serial queue of their own.
///
/// The flush queue hands over the acknowledgements of each pass once the pass is durable and goes on with the
/// next pass at once, so completions (and whatever work they trigger) never delay the next `write` and `fdatasync`.
/// Delivery stops at the part of a multi-shard write that is not yet durable in every participating journal (the
/// acknowledgement barrier of ``TransactionDurability``) and resumes when the last part settles.
final class AckDelivery: @unchecked Sendable {
    // `waiting` and `waitingHead` are touched only on `queue`.

    /// The queue that runs the acknowledgements.
    let queue: DispatchQueue
    /// Settled acknowledgements in append order; from `waitingHead` on not yet delivered.
    private var waiting: [WaitingAck] = []
    private var waitingHead = 0

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Queues `acks`, settled with `result`, behind every acknowledgement settled before, and delivers what it can.
    func settle(_ acks: [JournalAck], with result: Result<Void, JournalError>, journal: JournalWriter) {
        queue.async { [self] in
            for ack in acks { waiting.append(WaitingAck(ack: ack, result: result)) }
            deliver(journal: journal)
        }
    }

    /// Delivers acknowledgements that waited behind a multi-shard write that has now settled.
    func resume(journal: JournalWriter) {
        queue.async { [self] in deliver(journal: journal) }
    }

    /// Blocks until every acknowledgement settled before this call was delivered or is held behind a barrier.
    func waitUntilDelivered() {
        queue.sync {}
    }

    /// Delivers acknowledgements in append order, stopping at a multi-shard part that is not settled everywhere.
    private func deliver(journal: JournalWriter) {
        dispatchPrecondition(condition: .onQueue(queue))
        while waitingHead < waiting.count {
            let index = waitingHead
            let entry = waiting[index]
            switch entry.ack {
            case .single(let callback):
                callback(entry.result)
            case .transactionPart(let transaction):
                if !entry.reported {
                    waiting[index].reported = true
                    transaction.partSettled(in: journal, result: entry.result)
                }
                if !transaction.isSettled { return }
            }
            waitingHead += 1
        }
        waiting.removeAll(keepingCapacity: true)
        waitingHead = 0
    }
}

/// An acknowledgement with the outcome of its record.
private struct WaitingAck {
    let ack: JournalAck
    let result: Result<Void, JournalError>
    /// Whether a multi-shard part was already reported to its ``TransactionDurability``.
    var reported = false
}
