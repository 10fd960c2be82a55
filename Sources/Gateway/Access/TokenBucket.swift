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
        if let updated = updatedNanoseconds, now > updated {
            tokens = min(burst, tokens + Double(now - updated) / 1e9 * rate)
        }
        updatedNanoseconds = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
