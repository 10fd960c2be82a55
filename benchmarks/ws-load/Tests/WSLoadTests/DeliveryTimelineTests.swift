import Testing

@testable import WSLoad

@Suite("DeliveryTimeline")
struct DeliveryTimelineTests {
    @Test("counts deliveries, the slowest and the slow ones per second, and merges")
    func countsPerSecond() {
        let start: UInt64 = 5_000_000_000
        var first = DeliveryTimeline(seconds: 3)
        first.record(at: start + 100, start: start, latency: 2_000_000)
        first.record(at: start + 1_500_000_000, start: start, latency: 20_000_000)
        first.record(at: start + 9_000_000_000, start: start, latency: 1)  // beyond the last slot: ignored
        first.record(at: start, start: 0, latency: 1)  // before the start: ignored
        var second = DeliveryTimeline(seconds: 3)
        second.record(at: start + 1_000_000_000, start: start, latency: 30_000_000)
        first.merge(second)
        #expect(first.deliveries == [1, 2, 0])
        #expect(first.slowest == [2_000_000, 30_000_000, 0])
        #expect(first.slow == [0, 2, 0])
        #expect(first.lines.count == 2)
        var empty = DeliveryTimeline(seconds: 0)
        empty.record(at: start, start: start, latency: 1)
        #expect(empty.lines.isEmpty)
    }
}
