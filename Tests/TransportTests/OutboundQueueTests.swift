import Primitives
import TestSupport
import Testing
@testable import Transport

#if canImport(Glibc)
import Glibc
#endif

@Suite("Outbound queue against a byte-stream model")
struct OutboundQueueTests {
    /// What `writev` would send from the queue's first `limit` iovecs, cut to `budget` bytes.
    private func written(_ queue: borrowing OutboundQueue, limit: Int, budget: Int) -> [UInt8] {
        let iovecs = UnsafeMutablePointer<iovec>.allocate(capacity: limit)
        defer { iovecs.deallocate() }
        var bytes: [UInt8] = []
        for index in 0..<queue.fill(iovecs, capacity: limit) {
            guard let base = iovecs[index].iov_base else { continue }
            bytes += UnsafeRawBufferPointer(start: base, count: iovecs[index].iov_len)
        }
        return Array(bytes.prefix(budget))
    }

    @Test("random appends, partial writes and discards send exactly the model's bytes, frames never torn",
          arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func matchesModel(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var queue = OutboundQueue()
        // The model: whole chunks not yet fully sent, and how much of the first was.
        var pending: [[UInt8]] = []
        var sentOfFirst = 0
        var wire: [UInt8] = []
        var expectedWire: [UInt8] = []
        var label: UInt8 = 0
        for _ in 0..<3_000 {
            switch random.pick(["append", "append", "append", "write", "write", "discard"]) {
            case "append":
                label &+= 1
                let size = random.pick([0, 1, 5, 100, 3_000])
                let bytes = [UInt8](repeating: label, count: size)
                queue.append(ByteChunk(copying: bytes))
                if size > 0 { pending.append(bytes) }
            case "write":
                let budget = random.pick([1, 7, 150, 10_000, 1 << 20])
                let out = written(queue, limit: random.pick([1, 3, 1_024]), budget: budget)
                queue.consume(out.count)
                wire += out
                var left = out.count
                while left > 0, let first = pending.first {
                    let take = min(left, first.count - sentOfFirst)
                    expectedWire += first[sentOfFirst..<(sentOfFirst + take)]
                    sentOfFirst += take
                    left -= take
                    if sentOfFirst == first.count {
                        pending.removeFirst()
                        sentOfFirst = 0
                    }
                }
            default:
                queue.discardUnstarted()
                pending = sentOfFirst > 0 ? [pending[0]] : []
            }
            #expect(queue.pendingBytes == pending.reduce(0) { $0 + $1.count } - sentOfFirst)
            #expect(queue.isEmpty == pending.isEmpty)
            #expect(queue.backlogBytes == pending.dropFirst().reduce(0) { $0 + $1.count })
        }
        #expect(wire == expectedWire)
    }
}
