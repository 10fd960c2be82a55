#if canImport(Glibc)
import Glibc
#endif

/// The outcome of a non-blocking I/O call: `EAGAIN` is a value, not an error.
public enum IOResult<Value: Sendable>: Sendable {
    /// The call completed with this value.
    case processed(Value)
    /// The call would block; wait for readiness.
    case wouldBlock
}

/// A failed system call, tagged with its name and errno.
public struct SystemCallError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The system call that failed.
    public let call: String
    /// The errno it set.
    public let errno: Int32

    /// Creates an error for `call` with `errno`.
    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var description: String {
        "\(call) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }
}

/// The one place where syscall policy lives: EINTR is retried, EAGAIN becomes `.wouldBlock`,
/// anything else throws ``SystemCallError`` naming the call.
enum SystemCalls {
    @inline(__always)
    static func retrying(_ name: String, _ body: () -> Int) throws(SystemCallError) -> IOResult<Int> {
        while true {
            let result = body()
            if result >= 0 { return .processed(result) }
            let error = errno
            switch error {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw SystemCallError(call: name, errno: error)
            }
        }
    }

    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> IOResult<Int> {
        try retrying("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    static func writev(_ fd: Int32, _ iov: UnsafePointer<iovec>, _ count: Int32) throws(SystemCallError) -> IOResult<Int> {
        try retrying("writev") { Glibc.writev(fd, iov, count) }
    }

    /// Sends one buffer on a socket. The kernel takes `send` by a shorter path than a `writev` of one `iovec` (no
    /// vector to import, no file-layer accounting): 0.3–0.5 µs less per call of 1 KB on loopback TCP, measured by
    /// `benchmarks/kernel-floor/iovec-cost.c` (docs/benchmarks.md, "Four cuts on the delivery and write paths").
    static func send(_ fd: Int32, _ base: UnsafeRawPointer?, _ count: Int) throws(SystemCallError) -> IOResult<Int> {
        try retrying("send") { Glibc.send(fd, base, count, Int32(MSG_NOSIGNAL)) }
    }

    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemCallError) -> IOResult<Int> {
        try retrying("write") { Glibc.write(fd, bytes.baseAddress, bytes.count) }
    }

    static func setNonBlocking(_ fd: Int32) throws(SystemCallError) {
        let flags = fcntl(fd, F_GETFL, 0)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) >= 0 else {
            throw SystemCallError(call: "fcntl", errno: errno)
        }
    }

    static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) {
        var value = value
        _ = setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
    }
}
