/// Latencies in 1 µs buckets up to one second (plus one overflow bucket) and the exact maximum; allocated once per
/// worker.
struct LatencyHistogram {
    /// Largest latency with its own bucket, in microseconds.
    static let maximumMicroseconds = 1_000_000

    private(set) var counts: [UInt32]
    private(set) var total = 0
    /// The largest latency recorded, in nanoseconds (exact, also beyond the last bucket).
    private(set) var maximumNanoseconds: UInt64 = 0

    init() {
        counts = [UInt32](repeating: 0, count: Self.maximumMicroseconds + 1)
    }

    /// Records one latency in nanoseconds.
    @inline(__always)
    mutating func record(nanoseconds: UInt64) {
        let microseconds = Int(min(nanoseconds / 1000, UInt64(Self.maximumMicroseconds)))
        counts[microseconds] &+= 1
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

    /// The latency in microseconds below which `fraction` (0...1) of the samples fall; nil when empty.
    func percentile(_ fraction: Double) -> Int? {
        guard total > 0 else { return nil }
        let rank = max(1, Int((fraction * Double(total)).rounded(.up)))
        var seen = 0
        for (microseconds, count) in counts.enumerated() {
            seen += Int(count)
            if seen >= rank { return microseconds }
        }
        return Self.maximumMicroseconds
    }
}
