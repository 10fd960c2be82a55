#if canImport(Glibc)
import Glibc
#endif

/// Process-wide settings a socket server needs before it accepts anything.
public enum ResourceLimits {
    /// Raises the soft open-file limit to the hard limit and returns the limit in force afterwards.
    ///
    /// Every connection costs one descriptor; the default soft limit (often 1,024) would cap a
    /// fan-out server far below what the machine can hold.
    @discardableResult
    public static func raiseOpenFileLimit() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return UInt64(raised.rlim_cur) }
        }
        return UInt64(limit.rlim_cur)
    }

    /// Ignores `SIGPIPE`, so that writing to a vanished peer returns `EPIPE` instead of killing the process.
    public static func ignoreSIGPIPE() {
        signal(SIGPIPE, SIG_IGN)
    }
}
