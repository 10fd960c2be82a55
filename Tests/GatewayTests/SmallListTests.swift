@testable import Gateway
import TestSupport
import Testing

@Suite("SmallList against an array")
struct SmallListTests {
    @Test("random appends, removals, in-place updates and filters keep the same elements in the same order",
          arguments: [1, 2, 3, 4, 5] as [UInt64])
    func matchesArray(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var list = SmallList<Int>()
        var model: [Int] = []
        for step in 0..<2_000 {
            switch random.pick(["append", "append", "remove", "update", "filter"]) {
            case "append":
                list.append(step)
                model.append(step)
            case "remove" where !model.isEmpty:
                let position = Int.random(in: 0..<model.count, using: &random)
                #expect(list.remove(at: position) == model.remove(at: position))
            case "update" where !model.isEmpty:
                let position = Int.random(in: 0..<model.count, using: &random)
                list[position] += 1_000_000
                model[position] += 1_000_000
            case "filter":
                let divisor = Int.random(in: 2...7, using: &random)
                list.removeAll { $0 % divisor == 0 }
                model.removeAll { $0 % divisor == 0 }
            default:
                break
            }
            #expect(Array(list) == model)
            #expect(list.count == model.count && list.isEmpty == model.isEmpty)
        }
    }

    @Test("the first element lives inline: removing it promotes the second")
    func headPromotion() {
        var list = SmallList<String>()
        #expect(list.isEmpty)
        list.append("a")
        list.append("b")
        list.append("c")
        #expect(list.remove(at: 0) == "a")
        #expect(Array(list) == ["b", "c"])
        #expect(list.first == "b")
        list.removeAll { _ in true }
        #expect(list.isEmpty)
        list.append("d")
        #expect(Array(list) == ["d"])
    }

    @Test("visiting without retaining sees every element once, in order", arguments: 0...5)
    func unretainedVisit(count: Int) {
        final class Box {
            let value: Int
            init(_ value: Int) { self.value = value }
        }
        var list = SmallList<Box>()
        for value in 0..<count { list.append(Box(value)) }
        var seen: [Int] = []
        list.forEachUnretained { reference in seen.append(reference.takeUnretainedValue().value) }
        #expect(seen == Array(0..<count))
    }
}
