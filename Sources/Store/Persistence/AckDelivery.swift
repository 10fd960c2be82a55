import Dispatch
import Primitives

/// Runs a journal's acknowledgements in append order on a serial queue of their own.
///
/// The flush queue hands over the acknowledgements of each pass once the pass is durable and goes on with the
/// next pass at once, so completions (and whatever work they trigger) never delay the next `write` and `fdatasync`.
final class AckDelivery: Sendable {
    /// The queue that runs the acknowledgements.
    let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `acks` with `result`, after every acknowledgement settled before.
    func settle(_ acks: [JournalAck], with result: Result<Void, JournalError>) {
        queue.async {
            // The answers of one group commit reach each event loop in one hand-off.
            HandOffBatch.run { for ack in acks { ack(result) } }
        }
    }

    /// Blocks until every acknowledgement settled before this call was delivered.
    func waitUntilDelivered() {
        queue.sync {}
    }
}
