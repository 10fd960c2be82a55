import Glibc

/// The server's resident memory, from `/proc/PID/status`: `VmRSS` (now) and `VmHWM` (the peak so far), in bytes.
func processMemory(pid: Int) -> (resident: Int, peak: Int)? {
    let fd = open("/proc/\(pid)/status", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: 8192)
    let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard count > 0 else { return nil }
    var resident: Int?
    var peak: Int?
    for line in bytes[..<count].split(separator: UInt8(ascii: "\n")) {
        let text = String(decoding: line, as: UTF8.self)
        if text.hasPrefix("VmRSS:") { resident = kibibytes(in: text) }
        if text.hasPrefix("VmHWM:") { peak = kibibytes(in: text) }
    }
    guard let resident else { return nil }
    return (resident, peak ?? resident)
}

/// The number in a `/proc` status line such as `VmRSS:   12345 kB`, in bytes.
private func kibibytes(in line: String) -> Int? {
    let digits = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first { $0.allSatisfy(\.isNumber) }
    return digits.flatMap { Int($0) }.map { $0 * 1024 }
}
