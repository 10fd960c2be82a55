import Dispatch
import Primitives
import Synchronization
import Testing

@Suite struct HandOffBatchTests {
    /// Work a queue ran, in the order it ran.
    final class Journal: Sendable {
        private let entries = Mutex<[String]>([])
        func record(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    @Test func outsideABatchWorkLeavesAtOnce() {
        let queue = DispatchQueue(label: "hand-off.test")
        let journal = Journal()
        HandOffBatch.async({ journal.record("a") }, on: queue)
        queue.sync {}
        #expect(journal.all == ["a"])
    }

    @Test func aBatchHoldsItsWorkUntilItEndsAndKeepsItsOrder() {
        let first = DispatchQueue(label: "hand-off.first")
        let second = DispatchQueue(label: "hand-off.second")
        let journal = Journal()
        HandOffBatch.async({ journal.record("before") }, on: first)
        HandOffBatch.run {
            HandOffBatch.async({ journal.record("first 1") }, on: first)
            HandOffBatch.async({ journal.record("second 1") }, on: second)
            HandOffBatch.async({ journal.record("first 2") }, on: first)
            // Both queues are idle: nothing of the batch has left yet.
            first.sync {}
            second.sync {}
            #expect(journal.all == ["before"])
        }
        first.sync {}
        second.sync {}
        let all = journal.all
        #expect(all.filter { $0.hasPrefix("first") || $0 == "before" } == ["before", "first 1", "first 2"])
        #expect(all.contains("second 1"))
    }

    @Test func anInnerBatchJoinsTheOuterOne() {
        let queue = DispatchQueue(label: "hand-off.nested")
        let journal = Journal()
        HandOffBatch.run {
            HandOffBatch.run { HandOffBatch.async({ journal.record("inner") }, on: queue) }
            queue.sync {}
            #expect(journal.all.isEmpty)
            HandOffBatch.async({ journal.record("outer") }, on: queue)
        }
        queue.sync {}
        #expect(journal.all == ["inner", "outer"])
    }

    @Test func sendNowHandsOffWhatIsHeldAndKeepsTheBatchOpen() {
        let queue = DispatchQueue(label: "hand-off.send-now")
        let journal = Journal()
        HandOffBatch.run {
            HandOffBatch.async({ journal.record("a") }, on: queue)
            HandOffBatch.sendNow()
            queue.sync {}
            #expect(journal.all == ["a"])
            HandOffBatch.async({ journal.record("b") }, on: queue)
            queue.sync {}
            #expect(journal.all == ["a"])
        }
        queue.sync {}
        #expect(journal.all == ["a", "b"])
    }

    @Test func aBatchBelongsToItsThread() {
        let queue = DispatchQueue(label: "hand-off.threads")
        let journal = Journal()
        HandOffBatch.run {
            // Another thread has no batch open: its work leaves at once.
            let handedOff = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                HandOffBatch.async({ journal.record("other thread") }, on: queue)
                handedOff.signal()
            }
            handedOff.wait()
            queue.sync {}
            #expect(journal.all == ["other thread"])
        }
    }
}
