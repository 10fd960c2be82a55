import Foundation
import Testing

@testable import LoadTester

@Suite("LatencyHistogram")
struct LatencyHistogramTests {
    @Test("reads percentiles to three significant digits and the exact maximum")
    func readsPercentiles() {
        var histogram = LatencyHistogram()
        for microseconds in 1...1000 { histogram.record(nanoseconds: UInt64(microseconds) * 1000) }
        histogram.record(nanoseconds: 123_456_789)
        #expect(histogram.count == 1001)
        let p50 = histogram.nanoseconds(atPercentile: 50)
        #expect(p50 >= 500_000 && p50 <= 501_500)
        let p99 = histogram.nanoseconds(atPercentile: 99)
        #expect(p99 >= 990_000 && p99 <= 992_000)
        #expect(histogram.nanoseconds(atPercentile: 100) == 123_456_789)
        #expect(histogram.maximum == 123_456_789)
    }

    @Test("is empty before anything is recorded and after a reset")
    func resets() {
        var histogram = LatencyHistogram()
        #expect(histogram.nanoseconds(atPercentile: 99) == 0)
        #expect(histogram.summary == nil)
        histogram.record(nanoseconds: 5000)
        histogram.reset()
        #expect(histogram.count == 0)
        #expect(histogram.maximum == 0)
    }

    @Test("records beyond an hour as an hour, keeping the exact maximum")
    func clampsHugeValues() {
        var histogram = LatencyHistogram()
        histogram.record(nanoseconds: .max)
        #expect(histogram.count == 1)
        #expect(histogram.maximum == .max)
    }

    @Test("merges and survives the worker-process encoding")
    func mergesAndEncodes() throws {
        var first = LatencyHistogram()
        var second = LatencyHistogram()
        for value in stride(from: UInt64(1000), to: 2_000_000, by: 997) { first.record(nanoseconds: value) }
        for value in stride(from: UInt64(50_000_000), to: 60_000_000, by: 9973) { second.record(nanoseconds: value) }
        first.merge(second)
        let decoded = try JSONDecoder().decode(LatencyHistogram.self, from: JSONEncoder().encode(first))
        #expect(decoded.count == first.count)
        #expect(decoded.maximum == first.maximum)
        for percentile in [1.0, 50, 90, 99, 99.9] {
            #expect(decoded.nanoseconds(atPercentile: percentile) == first.nanoseconds(atPercentile: percentile))
        }
    }

    @Test("summarizes in microseconds with p50 ≤ p90 ≤ p99 ≤ p99.9 ≤ max")
    func summarizes() throws {
        var histogram = LatencyHistogram()
        for value in stride(from: UInt64(10_000), to: 10_000_000, by: 3_333) { histogram.record(nanoseconds: value) }
        let summary = try #require(histogram.summary)
        #expect(summary.p50 > 0)
        #expect(summary.p50 <= summary.p90 && summary.p90 <= summary.p99)
        #expect(summary.p99 <= summary.p999 && summary.p999 <= summary.max)
        #expect(summary.max == Double(histogram.maximum) / 1000)
    }
}
