@testable import CanopyDatabase
import Testing
import TestSupport

/// The pending-writes queue against a plain array of (id, element) doing the same operations.
@Suite("IDOrderedQueue")
struct IDOrderedQueueTests {
    @Test("appends, removals in and out of order, and changes in place behave as on an array")
    func matchesAnArray() {
        var random = SplitMix64(seed: 18)
        var queue = IDOrderedQueue<String>()
        var model: [(id: Int, element: String)] = []
        var nextID = 0
        for step in 0..<5_000 {
            switch random.next() % 4 {
            case 0, 1:
                // Several appends for each removal keeps a window of pending writes.
                nextID += Int(random.next() % 3) + 1
                queue.append("w\(nextID)", id: nextID)
                model.append((nextID, "w\(nextID)"))
            case 2:
                // The usual case: the oldest is answered; sometimes another, or one not held.
                let id = model.isEmpty || random.next() % 4 == 0
                    ? Int(random.next() % UInt64(nextID + 2)) : model[0].id
                let expected = model.firstIndex { $0.id == id }.map { model.remove(at: $0).element }
                #expect(queue.remove(id: id) == expected)
            default:
                guard let index = model.indices.randomElement(using: &random) else { continue }
                model[index].element += "'"
                #expect(queue.modify(id: model[index].id) { $0 += "'"; return $0 } == model[index].element)
            }
            #expect(queue.count == model.count)
            if step % 97 == 0 {
                #expect(queue.heldIDs == model.map(\.id))
                #expect(queue.reduce([String]()) { $0 + [$1] } == model.map(\.element))
                for entry in model { #expect(queue.modify(id: entry.id) { $0 } == entry.element) }
            }
        }
    }

    @Test("a removed id is gone, and cannot be changed; contains")
    func removedIsGone() {
        var queue = IDOrderedQueue<Int>()
        for id in 1...100 { queue.append(id * 10, id: id) }
        for id in 1...70 { #expect(queue.remove(id: id) == id * 10) }
        #expect(queue.remove(id: 70) == nil)
        #expect(queue.modify(id: 5) { $0 } == nil)
        #expect(queue.modify(id: 71) { $0 } == 710)
        #expect(queue.modify(id: 70) { $0 += 1 } == nil)
        #expect(queue.contains { $0 == 1000 })
        #expect(!queue.contains { $0 == 100 })
        #expect(queue.heldIDs == Array(71...100))
    }
}
