import Testing

@testable import WSLoad

@Suite("LatencyHistogram")
struct LatencyHistogramTests {
    @Test("reports percentiles in 1 µs buckets below a second and 1 ms buckets above")
    func reportsPercentilesAcrossTiers() {
        var histogram = LatencyHistogram()
        for microseconds in [5, 5, 999_999, 1_234_567, 250_000_000] {
            histogram.record(nanoseconds: UInt64(microseconds) * 1000 + 999)
        }
        #expect(histogram.percentile(0.4) == 5)
        #expect(histogram.percentile(0.6) == 999_999)
        #expect(histogram.percentile(0.8) == 1_234_000)
        #expect(histogram.percentile(1.0) == LatencyHistogram.maximumMicroseconds)
        #expect(histogram.maximumNanoseconds == 250_000_000_999)
    }

    @Test("merges counts and maxima")
    func merges() {
        var first = LatencyHistogram()
        var second = LatencyHistogram()
        first.record(nanoseconds: 1_000)
        second.record(nanoseconds: 3_000_000_000)
        first.merge(second)
        #expect(first.total == 2)
        #expect(first.percentile(1.0) == 3_000_000)
        #expect(first.maximumNanoseconds == 3_000_000_000)
        #expect(LatencyHistogram().percentile(0.5) == nil)
    }
}
