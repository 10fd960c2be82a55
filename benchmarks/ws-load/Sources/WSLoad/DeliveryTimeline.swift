/// Deliveries per second of a run: how many, the slowest, and how many took longer than `slowNanoseconds`; so that a
/// disturbance (a subscriber stalling or resuming, a server pause) shows when it happened, not only in percentiles.
struct DeliveryTimeline {
    /// Deliveries slower than this count as slow.
    static let slowNanoseconds: UInt64 = 10_000_000

    private(set) var deliveries: [Int]
    private(set) var slowest: [UInt64]
    private(set) var slow: [Int]

    /// A timeline of `seconds` one-second slots (0: records nothing).
    init(seconds: Int) {
        deliveries = [Int](repeating: 0, count: max(0, seconds))
        slowest = [UInt64](repeating: 0, count: max(0, seconds))
        slow = [Int](repeating: 0, count: max(0, seconds))
    }

    /// Records a delivery at `now` with `latency`, in the second since `start` (the workload's start; 0: not
    /// started yet, nothing recorded).
    @inline(__always)
    mutating func record(at now: UInt64, start: UInt64, latency: UInt64) {
        guard !deliveries.isEmpty, start != 0, now >= start else { return }
        let second = Int((now - start) / 1_000_000_000)
        guard second < deliveries.count else { return }
        deliveries[second] += 1
        slowest[second] = max(slowest[second], latency)
        if latency > Self.slowNanoseconds { slow[second] += 1 }
    }

    /// Adds another worker's timeline.
    mutating func merge(_ other: DeliveryTimeline) {
        for second in 0..<min(deliveries.count, other.deliveries.count) {
            deliveries[second] += other.deliveries[second]
            slowest[second] = max(slowest[second], other.slowest[second])
            slow[second] += other.slow[second]
        }
    }

    /// One line per second that had deliveries.
    var lines: [String] {
        deliveries.indices.filter { deliveries[$0] > 0 }.map { second in
            "  second \(second): \(deliveries[second]) deliveries, slowest \(slowest[second] / 1000) µs, "
                + "\(slow[second]) over \(Self.slowNanoseconds / 1_000_000) ms"
        }
    }
}
