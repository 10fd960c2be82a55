import Dispatch

/// A batch of blocks handed to exactly one queue.
private struct HandedOver: @unchecked Sendable {
    let blocks: [Callbacks.Block]
}

/// Who hears a write's answer: the app's block and the reference it wrote, kept apart so that raising the answer
/// makes no closure per write.
struct WriteCompletion {
    let block: ((any Error)?, DatabaseReference) -> Void
    let reference: DatabaseReference
}

/// The blocks the engine raises, run on the callback queue in the order raised, a batch per turn of the
/// connection's loop.
///
/// The API's blocks are ordinary closures, as the SDK's are (so code written for it compiles in both language
/// modes), hence not `Sendable`; each batch is handed to one queue and never run concurrently with itself, which is
/// the guarantee `Sendable` would give.
///
/// When the callback queue is the database's own, the loop's thread runs the batch itself through `sync` on that
/// queue: the blocks still run on the queue (serialized with anything else put on it), and no other thread has to
/// wake up for them. A queue the app passes in (the main queue) gets the batch with `async`, so the connection
/// never waits for the app's other work there.
final class Callbacks: @unchecked Sendable {  // `pending` and `spare` are the loop thread's
    let queue: DispatchQueue
    private let loop: ConnectionLoop
    private let runsOnLoop: Bool
    /// A block to run: any closure, an observer's event, or a write's answer (the last two with their arguments,
    /// so that no closure is made per event or per write).
    enum Block {
        case plain(() -> Void)
        case event((DataSnapshot, String?) -> Void, DataSnapshot, previousKey: String?)
        case write(WriteCompletion, DatabaseError?)

        func run() {
            switch self {
            case .plain(let block): block()
            case .event(let block, let snapshot, let previousKey): block(snapshot, previousKey)
            case .write(let completion, let error): completion.block(error, completion.reference)
            }
        }
    }

    private var pending: [Block] = []
    /// The emptied storage of the last batch run through `sync`, reused for the next.
    private var spare: [Block] = []

    /// Blocks for `queue`, raised on `loop`; `ownQueue`: nothing but these blocks and the app's own uses of
    /// ``Database/callbackQueue`` run there.
    init(queue: DispatchQueue, ownQueue: Bool, loop: ConnectionLoop) {
        self.queue = queue
        self.loop = loop
        runsOnLoop = ownQueue
    }

    /// Raises `block` after every block raised before it: from the loop's thread (the engine).
    func raise(_ block: @escaping () -> Void) {
        loop.assertOnLoop()
        pending.append(.plain(block))
    }

    /// Raises an observer's event, as ``raise(_:)``.
    func raise(_ block: @escaping (DataSnapshot, String?) -> Void, _ snapshot: DataSnapshot, previousKey: String?) {
        loop.assertOnLoop()
        pending.append(.event(block, snapshot, previousKey: previousKey))
    }

    /// Raises a write's answer, as ``raise(_:)``.
    func raise(_ completion: WriteCompletion, _ error: DatabaseError?) {
        loop.assertOnLoop()
        pending.append(.write(completion, error))
    }

    /// Raises `block` from any thread, after the requests posted before it (the API's immediate answers).
    func post(_ block: @escaping () -> Void) {
        loop.post { [self] in raise(block) }
    }

    /// Hands the blocks raised in this turn to the queue; called by the loop at the end of each turn.
    func deliver() {
        guard !pending.isEmpty else { return }
        var batch: [Block] = []
        swap(&batch, &spare)
        swap(&batch, &pending)
        guard runsOnLoop else {
            let handed = HandedOver(blocks: batch)
            queue.async { for block in handed.blocks { block.run() } }
            return
        }
        queue.sync { for block in batch { block.run() } }
        batch.removeAll(keepingCapacity: true)
        spare = batch
    }
}
