import Glibc
import Primitives

/// CPU time, memory and limits of processes, read from `/proc` and `getrusage`; used at the edges of a run only.
enum ProcessStats {
    /// CPU time (user + system) of another process, from `/proc/PID/stat`.
    ///
    /// Used to report the server's CPU cost per delivery: on a shared machine it varies far less than throughput.
    static func cpuSeconds(pid: Int) -> Double? {
        cpuTimes(pid: pid).map { $0.user + $0.kernel }
    }

    /// A process's CPU time in user space and in the kernel, in seconds, from `/proc/PID/stat` (fields 14 and 15,
    /// in clock ticks).
    static func cpuTimes(pid: Int) -> (user: Double, kernel: Double)? {
        guard let bytes = readSmallFile("/proc/\(pid)/stat") else { return nil }
        // The command name (field 2) is in parentheses and may contain spaces; fields after it are plain.
        guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        // fields[0] is field 3 (state), so utime (14) and stime (15) are fields[11] and fields[12].
        guard fields.count > 12,
            let user = Int(String(decoding: fields[11], as: UTF8.self)),
            let system = Int(String(decoding: fields[12], as: UTF8.self))
        else { return nil }
        let ticksPerSecond = sysconf(Int32(_SC_CLK_TCK))
        guard ticksPerSecond > 0 else { return nil }
        return (Double(user) / Double(ticksPerSecond), Double(system) / Double(ticksPerSecond))
    }

    /// CPU time (user + system) of this process so far.
    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        return user + system
    }

    /// A process's resident memory: `VmRSS` (now) and `VmHWM` (the peak so far), in bytes.
    static func memory(pid: Int) -> (resident: Int, peak: Int)? {
        ProcessMemory.of(pid: Int32(clamping: pid))
    }

    /// Raises the soft open-file limit to the hard limit; returns the limit in effect.
    static func raiseOpenFileLimit() -> Int {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 1024 }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(resource, &limit)
        guard getrlimit(resource, &limit) == 0 else { return 1024 }
        return Int(clamping: limit.rlim_cur)
    }

    /// Online CPU cores and physical memory in bytes, for the report's machine line.
    static func machine() -> (cores: Int, memoryBytes: Int) {
        let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        let pages = sysconf(Int32(_SC_PHYS_PAGES))
        let pageSize = sysconf(Int32(_SC_PAGESIZE))
        return (max(1, cores), max(0, pages) * max(0, pageSize))
    }

    /// The one-minute load average (`/proc/loadavg`).
    static func loadAverage() -> Double? {
        guard let bytes = readSmallFile("/proc/loadavg"), let first = bytes.split(separator: UInt8(ascii: " ")).first else {
            return nil
        }
        return Double(String(decoding: first, as: UTF8.self))
    }
}
