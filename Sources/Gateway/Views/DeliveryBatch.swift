import Transport

/// The pushes of one turn of a namespace's sequencer, handed to each event loop once, when the turn ends.
///
/// A turn often applies many writes (a connection's pipelined batch; under load, the writes of every connection
/// that waited); handing each write's pushes to the loops separately would cost a queue hop per write and view,
/// and let a loop flush between them. Batched, a loop runs the whole turn's deliveries in one pass and flushes
/// once: one `writev` per connection per turn. Order holds: a
/// loop gets its works in the order the views published them, and before anything the sequencer hands it later
/// (acknowledgements, initial data of later listens).
final class DeliveryBatch: @unchecked Sendable {
    // Owned by the namespace's sequencer.
    private var loops: [EventLoop] = []
    private var works: [[@Sendable () -> Void]] = []

    /// Adds `work` for `loop`, after the works added before.
    func add(_ loop: EventLoop, _ work: @escaping @Sendable () -> Void) {
        if let index = loops.firstIndex(where: { $0 === loop }) {
            works[index].append(work)
        } else {
            loops.append(loop)
            works.append([work])
        }
    }

    /// Hands every loop its works, one hand-off per loop, and empties the batch.
    func handOff() {
        for (loop, loopWorks) in zip(loops, works) {
            loop.execute {
                for work in loopWorks { work() }
            }
        }
        loops.removeAll(keepingCapacity: true)
        works.removeAll(keepingCapacity: true)
    }
}
