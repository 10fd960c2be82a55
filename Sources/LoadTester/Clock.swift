import Glibc

/// Monotonic time in nanoseconds (`CLOCK_MONOTONIC`; a vDSO call, cheap enough for the hot path).
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
}

/// Seconds between two `monotonicNanoseconds()` readings.
func secondsBetween(_ start: UInt64, _ end: UInt64) -> Double {
    end > start ? Double(end - start) / 1e9 : 0
}

/// Sleeps the calling thread for `seconds`.
func sleepSeconds(_ seconds: Double) {
    guard seconds > 0 else { return }
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0, errno == EINTR {
        request = remaining
    }
}
