import Histogram

/// The intervals of every worker merged: per second for the timeline and the plots, and over the whole run for
/// the percentiles and the live progress line.
struct IntervalAggregate {
    /// Latencies above this count as slow in the timeline (10 ms).
    static let slowNanoseconds: UInt64 = 10_000_000

    private(set) var seconds: [Int: IntervalSample] = [:]
    private(set) var latency = LatencyHistogram()
    private(set) var writeLatency = LatencyHistogram()

    /// Adds finished intervals.
    mutating func add(_ samples: [IntervalSample]) {
        for sample in samples {
            latency.merge(sample.latency)
            writeLatency.merge(sample.writeLatency)
            if var existing = seconds[sample.second] {
                existing.deliveries += sample.deliveries
                existing.acks += sample.acks
                existing.sent += sample.sent
                existing.latency.merge(sample.latency)
                existing.writeLatency.merge(sample.writeLatency)
                seconds[sample.second] = existing
            } else {
                seconds[sample.second] = sample
            }
        }
    }

    /// Every second from 0 to the last that saw anything, for a workload that lasted `elapsed` seconds.
    func timeline(elapsed: Double) -> [BenchReport.TimelinePoint] {
        guard let last = seconds.keys.max() else { return [] }
        return (0...last).map { second in
            let sample = seconds[second] ?? IntervalSample(second: second)
            let slow = sample.latency.count > 0
                ? sample.latency.histogram.count(
                    within: Self.slowNanoseconds...LatencyHistogram.highestTrackable)
                : 0
            return BenchReport.TimelinePoint(
                second: second, seconds: min(1, max(0.001, elapsed - Double(second))),
                deliveries: sample.deliveries, acks: sample.acks, sent: sample.sent,
                p50: microseconds(sample.latency.nanoseconds(atPercentile: 50)),
                p99: microseconds(sample.latency.nanoseconds(atPercentile: 99)),
                max: microseconds(sample.latency.maximum), slow: Int(clamping: slow))
        }
    }

    /// The latency distribution for the plot: percentiles from 0 to 99.999 and the maximum.
    var distribution: [BenchReport.DistributionPoint] {
        guard latency.count > 0 else { return [] }
        let percentiles = [
            0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.995, 99.999, 100,
        ]
        return percentiles.map {
            BenchReport.DistributionPoint(
                percentile: $0, microseconds: microseconds(latency.nanoseconds(atPercentile: $0)))
        }
    }
}

/// Nanoseconds as microseconds.
func microseconds(_ nanoseconds: UInt64) -> Double {
    Double(nanoseconds) / 1000
}

extension LatencyHistogram {
    /// p50, p90, p99, p99.9 and the maximum in microseconds; nil when empty.
    var summary: BenchReport.LatencySummary? {
        guard count > 0 else { return nil }
        return BenchReport.LatencySummary(
            count: Int(clamping: count), p50: microseconds(nanoseconds(atPercentile: 50)),
            p90: microseconds(nanoseconds(atPercentile: 90)), p99: microseconds(nanoseconds(atPercentile: 99)),
            p999: microseconds(nanoseconds(atPercentile: 99.9)), max: microseconds(maximum))
    }
}
