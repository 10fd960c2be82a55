/// A token bucket: `rate` tokens a second, at most `burst` saved up. Owned by one queue (a connection's loop).
struct TokenBucket {
    let rate: Double
    let burst: Double
    private var tokens: Double
    private var updatedNanoseconds: UInt64?

    init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
        tokens = burst
    }

    /// Takes one token at `now` (monotonic nanoseconds); `false` when none is left.
    mutating func take(now: UInt64) -> Bool {
        take(1, now: now) == nil
    }

    /// Takes `count` tokens at `now` when they are there and returns `nil`; otherwise takes nothing and returns the
    /// seconds until they will be (at least a millisecond; a `count` over the burst waits for a full bucket).
    mutating func take(_ count: Double, now: UInt64) -> Double? {
        if let updated = updatedNanoseconds, now > updated {
            tokens = min(burst, tokens + Double(now - updated) / 1e9 * rate)
        }
        updatedNanoseconds = now
        let needed = min(count, burst)
        guard tokens >= needed else { return max(0.001, (needed - tokens) / rate) }
        tokens -= needed
        return nil
    }
}
