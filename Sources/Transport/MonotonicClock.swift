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
