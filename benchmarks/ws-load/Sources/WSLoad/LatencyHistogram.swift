/// Latencies in 1 µs buckets up to one second, 1 ms buckets from there to 100 s (plus one overflow bucket), and the
/// exact maximum; allocated once per worker.
///
/// Deep in-flight windows put latencies beyond a second, which the coarse tier still tells apart.
struct LatencyHistogram {
    /// Largest latency with its own 1 µs bucket, in microseconds.
    static let fineLimitMicroseconds = 1_000_000
    /// Width of the buckets beyond the fine ones, in microseconds.
    static let coarseWidthMicroseconds = 1_000
    /// Largest latency with its own bucket, in microseconds; larger ones share the last bucket.
    static let maximumMicroseconds = 100_000_000

    private static let coarseCount = (maximumMicroseconds - fineLimitMicroseconds) / coarseWidthMicroseconds

    private(set) var counts: [UInt32]
    private(set) var total = 0
    /// The largest latency recorded, in nanoseconds (exact, also beyond the last bucket).
    private(set) var maximumNanoseconds: UInt64 = 0

    init() {
        counts = [UInt32](repeating: 0, count: Self.fineLimitMicroseconds + Self.coarseCount + 1)
    }

    /// Records one latency in nanoseconds.
    @inline(__always)
    mutating func record(nanoseconds: UInt64) {
        let microseconds = Int(min(nanoseconds / 1000, UInt64(Self.maximumMicroseconds)))
        let bucket = microseconds < Self.fineLimitMicroseconds
            ? microseconds
            : Self.fineLimitMicroseconds + (microseconds - Self.fineLimitMicroseconds) / Self.coarseWidthMicroseconds
        counts[bucket] &+= 1
        total += 1
        maximumNanoseconds = max(maximumNanoseconds, nanoseconds)
    }

    /// Adds another histogram's counts to this one.
    mutating func merge(_ other: LatencyHistogram) {
        for index in counts.indices where other.counts[index] != 0 {
            counts[index] &+= other.counts[index]
        }
        total += other.total
        maximumNanoseconds = max(maximumNanoseconds, other.maximumNanoseconds)
    }

    /// The latency in microseconds below which `fraction` (0...1) of the samples fall (a bucket's lower bound);
    /// nil when empty.
    func percentile(_ fraction: Double) -> Int? {
        guard total > 0 else { return nil }
        let rank = max(1, Int((fraction * Double(total)).rounded(.up)))
        var seen = 0
        for (bucket, count) in counts.enumerated() {
            seen += Int(count)
            if seen >= rank { return Self.lowerBound(ofBucket: bucket) }
        }
        return Self.maximumMicroseconds
    }

    private static func lowerBound(ofBucket bucket: Int) -> Int {
        bucket < fineLimitMicroseconds
            ? bucket
            : fineLimitMicroseconds + (bucket - fineLimitMicroseconds) * coarseWidthMicroseconds
    }
}
