import Glibc

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
        guard let bytes = read("/proc/\(pid)/stat") else { return nil }
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

    /// A process's resident memory from `/proc/PID/status`: `VmRSS` (now) and `VmHWM` (the peak so far), in bytes.
    static func memory(pid: Int) -> (resident: Int, peak: Int)? {
        guard let bytes = read("/proc/\(pid)/status") else { return nil }
        var resident: Int?
        var peak: Int?
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            let text = String(decoding: line, as: UTF8.self)
            if text.hasPrefix("VmRSS:") { resident = kibibytes(in: text) }
            if text.hasPrefix("VmHWM:") { peak = kibibytes(in: text) }
        }
        guard let resident else { return nil }
        return (resident, peak ?? resident)
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
        guard let bytes = read("/proc/loadavg"), let first = bytes.split(separator: UInt8(ascii: " ")).first else {
            return nil
        }
        return Double(String(decoding: first, as: UTF8.self))
    }

    /// The number in a `/proc` status line such as `VmRSS:   12345 kB`, in bytes.
    private static func kibibytes(in line: String) -> Int? {
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        return fields.dropFirst().first { $0.allSatisfy(\.isNumber) }.flatMap { Int($0) }.map { $0 * 1024 }
    }

    /// The first 16 KiB of a small `/proc` file.
    private static func read(_ path: String) -> ArraySlice<UInt8>? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 16_384)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return bytes[..<count]
    }
}
