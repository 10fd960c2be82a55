@testable import CanopyDatabase
import Dispatch
import Synchronization
import Testing

/// The hand-off that carries the API's requests to the engine and the engine's blocks to the callback queue.
@Suite("OrderedHandOff")
struct OrderedHandOffTests {
    /// What ran, in order; touched only on the hand-off's queue, read after it drained.
    final class Log: @unchecked Sendable {
        var entries: [(thread: Int, number: Int)] = []
    }

    @Test("closures posted from many threads all run on the queue, each thread's in the order it posted them")
    func keepsEachPostersOrder() async {
        let queue = DispatchQueue(label: "hand-off-test")
        let handOff = OrderedHandOff(queue: queue)
        let log = Log()
        let posters = 4
        let perPoster = 5_000
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<posters {
                group.addTask {
                    for number in 0..<perPoster {
                        handOff.post {
                            dispatchPrecondition(condition: .onQueue(queue))
                            log.entries.append((thread, number))
                        }
                    }
                }
            }
        }
        queue.sync { handOff.runPending() }
        #expect(log.entries.count == posters * perPoster)
        for thread in 0..<posters {
            #expect(log.entries.filter { $0.thread == thread }.map(\.number) == Array(0..<perPoster))
        }
    }

    @Test("running what is pending on the queue (a synchronous read) sees every earlier post, and nothing runs twice")
    func runPendingSeesEarlierPosts() {
        let queue = DispatchQueue(label: "hand-off-test")
        let handOff = OrderedHandOff(queue: queue)
        let counter = Mutex(0)
        for _ in 0..<100 { handOff.post { counter.withLock { $0 += 1 } } }
        let seen: Int = queue.sync {
            handOff.runPending()
            return counter.withLock { $0 }
        }
        #expect(seen == 100)
        // The block the first post scheduled finds nothing left to run.
        queue.sync {}
        #expect(counter.withLock { $0 } == 100)
    }
}
