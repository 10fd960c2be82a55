#if canImport(Glibc)
import Glibc
#endif

/// Nanoseconds on the monotonic clock, for deadlines that must not jump with the wall clock.
public enum MonotonicClock {
    /// The current monotonic time in nanoseconds.
    @inline(__always)
    public static func nowNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }
}

extension MonotonicClock {
    /// Converts seconds from configuration to nanoseconds without trapping: negative or NaN
    /// becomes 0, anything beyond about 31 years is clamped.
    public static func nanoseconds(fromSeconds seconds: Double) -> UInt64 {
        guard seconds > 0 else { return 0 }
        return UInt64(min(seconds, 1e9) * 1e9)
    }
}
