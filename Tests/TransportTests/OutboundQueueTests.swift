import Primitives
import TestSupport
import Testing
@testable import Transport

#if canImport(Glibc)
import Glibc
#endif

@Suite("Outbound queue against a byte-stream model")
struct OutboundQueueTests {
    /// What `writev` would send from the queue's first `limit` iovecs, cut to `budget` bytes, small chunks gathered
    /// into a staging buffer of `stagingSize` bytes (none when 0). The staging buffer is scribbled over afterwards,
    /// as the next fill does, so bytes the queue still needs cannot live only there.
    private func written(_ queue: borrowing OutboundQueue, limit: Int, budget: Int, stagingSize: Int) -> [UInt8] {
        let iovecs = UnsafeMutablePointer<iovec>.allocate(capacity: limit)
        let staging = stagingSize > 0
            ? UnsafeMutableRawBufferPointer.allocate(byteCount: stagingSize, alignment: 16)
            : UnsafeMutableRawBufferPointer(start: nil, count: 0)
        defer {
            iovecs.deallocate()
            if stagingSize > 0 {
                staging.initializeMemory(as: UInt8.self, repeating: 0xEE)
                staging.deallocate()
            }
        }
        var bytes: [UInt8] = []
        for index in 0..<queue.fill(iovecs, capacity: limit, staging: staging) {
            guard let base = iovecs[index].iov_base else { continue }
            bytes += UnsafeRawBufferPointer(start: base, count: iovecs[index].iov_len)
        }
        return Array(bytes.prefix(budget))
    }

    @Test("random appends, partial writes, gathered small chunks and discards send exactly the model's bytes",
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
                let size = random.pick([0, 1, 5, 100, 512, 513, 3_000])
                let bytes = [UInt8](repeating: label, count: size)
                queue.append(ByteChunk(copying: bytes))
                if size > 0 { pending.append(bytes) }
            case "write":
                let budget = random.pick([1, 7, 150, 10_000, 1 << 20])
                let out = written(queue, limit: random.pick([1, 3, 1_024]), budget: budget,
                                  stagingSize: random.pick([0, 64, 700, 4_096, 65_536]))
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

    @Test("runs of small chunks go out as one iovec from the staging buffer; large and lone chunks point at their own bytes")
    func gathersSmallChunks() {
        var queue = OutboundQueue()
        let iovecs = UnsafeMutablePointer<iovec>.allocate(capacity: 16)
        let staging = UnsafeMutableRawBufferPointer.allocate(byteCount: 4_096, alignment: 16)
        defer {
            iovecs.deallocate()
            staging.deallocate()
        }
        let lone = ByteChunk(copying: [UInt8](repeating: 1, count: 90))
        queue.append(lone)
        #expect(queue.fill(iovecs, capacity: 16, staging: staging) == 1)
        #expect(UnsafeRawPointer(iovecs[0].iov_base) == lone.baseAddress)

        for _ in 0..<9 { queue.append(ByteChunk(copying: [UInt8](repeating: 2, count: 90))) }
        let large = ByteChunk(copying: [UInt8](repeating: 3, count: 3_000))
        queue.append(large)
        for _ in 0..<5 { queue.append(ByteChunk(copying: [UInt8](repeating: 4, count: 100))) }
        #expect(queue.fill(iovecs, capacity: 16, staging: staging) == 3)
        #expect(iovecs[0].iov_len == 900 && UnsafeRawPointer(iovecs[0].iov_base) == UnsafeRawPointer(staging.baseAddress))
        #expect(iovecs[1].iov_len == 3_000 && UnsafeRawPointer(iovecs[1].iov_base) == large.baseAddress)
        #expect(iovecs[2].iov_len == 500)

        // Past the staging buffer's room, the rest go out as they are.
        for _ in 0..<60 { queue.append(ByteChunk(copying: [UInt8](repeating: 5, count: 100))) }
        let entries = queue.fill(iovecs, capacity: 16, staging: staging)
        #expect(entries == 16)
        var total = 0
        for index in 0..<entries { total += iovecs[index].iov_len }
        #expect(total == 8_300)  // 900 staged, 3,000 as it is, 500 + 26 × 100 staged, 13 × 100 as they are
        #expect(iovecs[2].iov_len == 3_100)
    }

    @Test("a drained ring is kept for the next burst; the sweep frees it when larger than the kept size and empty")
    func keepsDrainedRingUntilReleased() {
        var queue = OutboundQueue()
        let chunk = ByteChunk(copying: [UInt8](repeating: 7, count: 10))
        for _ in 0..<100 { queue.append(chunk) }
        #expect(queue.capacity == 128)
        queue.releaseSpareCapacity()
        #expect(queue.capacity == 128)  // chunks still queued
        queue.consume(1_000)
        #expect(queue.isEmpty && queue.capacity == 128)  // kept: the next burst grows nothing
        for _ in 0..<100 { queue.append(chunk) }
        #expect(queue.capacity == 128 && queue.pendingBytes == 1_000)
        queue.consume(1_000)
        queue.releaseSpareCapacity()
        #expect(queue.capacity == 0)
        for _ in 0..<10 { queue.append(chunk) }
        queue.consume(100)
        queue.releaseSpareCapacity()
        #expect(queue.capacity == 16)  // up to the kept size, a ring stays
    }
}
