import Glibc

/// A process's memory as the kernel reports it in `/proc/PID/status`.
public enum ProcessMemory {
    /// `VmRSS` (resident now) and `VmHWM` (the peak so far) of process `pid`, in bytes; `nil` when unreadable.
    public static func of(pid: Int32) -> (resident: Int, peak: Int)? {
        guard let bytes = readSmallFile("/proc/\(pid)/status") else { return nil }
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

    /// The number in a `/proc` status line such as `VmRSS:   12345 kB`, in bytes.
    private static func kibibytes(in line: String) -> Int? {
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        return fields.dropFirst().first { $0.allSatisfy(\.isNumber) }.flatMap { Int($0) }.map { $0 * 1024 }
    }
}

/// The first 16 KiB of a small file such as one under `/proc`; `nil` when it cannot be read or is empty.
public func readSmallFile(_ path: String) -> ArraySlice<UInt8>? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: 16_384)
    let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
    guard count > 0 else { return nil }
    return bytes[..<count]
}
