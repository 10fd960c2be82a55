import Glibc

/// CPU time (user + system) of another process, from `/proc/PID/stat` (fields 14 and 15, in clock ticks).
///
/// Used to report the server's CPU cost per delivery: on a shared machine it varies far less than throughput.
func processCPUSeconds(pid: Int) -> Double? {
    let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: 4096)
    let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard count > 0 else { return nil }
    // The command name (field 2) is in parentheses and may contain spaces; fields after it are plain.
    guard let close = bytes[..<count].lastIndex(of: UInt8(ascii: ")")) else { return nil }
    let fields = bytes[(close + 1)..<count].split(separator: UInt8(ascii: " "))
    // fields[0] is field 3 (state), so utime (14) and stime (15) are fields[11] and fields[12].
    guard fields.count > 12,
        let user = Int(String(decoding: fields[11], as: UTF8.self)),
        let system = Int(String(decoding: fields[12], as: UTF8.self))
    else { return nil }
    let ticksPerSecond = sysconf(Int32(_SC_CLK_TCK))
    guard ticksPerSecond > 0 else { return nil }
    return Double(user + system) / Double(ticksPerSecond)
}

/// CPU time (user + system) of this process so far.
func ownCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return user + system
}
