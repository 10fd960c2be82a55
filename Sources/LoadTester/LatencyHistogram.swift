import Histogram

/// Latencies in nanoseconds in an HdrHistogram: 1 µs resolution at the bottom, three significant digits up to an
/// hour, and the exact maximum; recording allocates nothing.
///
/// Encoded compactly for worker processes, as the recorded (value, count) pairs rather than the ~23,000 counters.
struct LatencyHistogram: Sendable {
    /// The smallest latency told apart from zero (1 µs, in nanoseconds).
    static let lowestDiscernible: UInt64 = 1_000
    /// The largest latency with its own bucket (one hour); larger ones are recorded as this.
    static let highestTrackable: UInt64 = 3_600_000_000_000

    private(set) var histogram: Histogram<UInt64>
    /// The largest latency recorded, exact (the histogram keeps it only to three digits once merged from pairs).
    private(set) var maximum: UInt64 = 0

    init() {
        histogram = Histogram(
            lowestDiscernibleValue: Self.lowestDiscernible, highestTrackableValue: Self.highestTrackable,
            numberOfSignificantValueDigits: .three)
    }

    /// Latencies recorded.
    var count: UInt64 { histogram.totalCount }

    /// Records one latency.
    @inline(__always)
    mutating func record(nanoseconds: UInt64) {
        histogram.record(min(nanoseconds, Self.highestTrackable))
        if nanoseconds > maximum { maximum = nanoseconds }
    }

    /// Adds another histogram's latencies.
    mutating func merge(_ other: LatencyHistogram) {
        guard other.count > 0 else { return }
        histogram.add(other.histogram)
        maximum = max(maximum, other.maximum)
    }

    /// Forgets everything recorded, keeping the counters' memory.
    mutating func reset() {
        guard count > 0 else { return }
        histogram.reset()
        maximum = 0
    }

    /// The latency at `percentile` (0...100) in nanoseconds: the highest value of its bucket, never above the
    /// maximum; 0 when empty.
    func nanoseconds(atPercentile percentile: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        return percentile >= 100 ? maximum : min(histogram.valueAtPercentile(percentile), maximum)
    }
}

extension LatencyHistogram: Codable {
    private enum CodingKeys: String, CodingKey {
        case pairs, maximum
    }

    init(from decoder: any Decoder) throws {
        self.init()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let pairs = try container.decode([UInt64].self, forKey: .pairs)
        guard pairs.count % 2 == 0 else {
            throw DecodingError.dataCorruptedError(forKey: .pairs, in: container, debugDescription: "odd pair list")
        }
        for index in stride(from: 0, to: pairs.count, by: 2) {
            histogram.record(min(pairs[index], Self.highestTrackable), count: pairs[index + 1])
        }
        maximum = try container.decode(UInt64.self, forKey: .maximum)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        var pairs: [UInt64] = []
        for bucket in histogram.recordedValues() {
            pairs.append(bucket.value)
            pairs.append(bucket.count)
        }
        try container.encode(pairs, forKey: .pairs)
        try container.encode(maximum, forKey: .maximum)
    }
}
