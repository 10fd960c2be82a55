#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import WebSocket

/// Masking keys for client frames (RFC 6455 §5.3: a fresh, unpredictable key per frame), drawn from the system's
/// secure generator a batch at a time: one read per ``batch`` frames instead of a system call per frame.
struct MaskingKeys {
    /// Keys fetched per read.
    static let batch = 1024
    private var pool = [UInt8](repeating: 0, count: batch * 4)
    /// Offset of the next unused key in `pool`.
    private var next = batch * 4

    /// A key no frame used before.
    mutating func take() -> WebSocketMaskingKey {
        if next == pool.count { refill() }
        defer { next += 4 }
        return WebSocketMaskingKey(pool[next], pool[next + 1], pool[next + 2], pool[next + 3])
    }

    private mutating func refill() {
        let filled = pool.withUnsafeMutableBytes { Self.fillFromSystem($0) }
        if !filled {
            // The batch call failed (no entropy source for bulk reads): the standard library's generator, which
            // fails loudly rather than returning predictable bytes.
            var generator = SystemRandomNumberGenerator()
            for index in pool.indices { pool[index] = generator.next() }
        }
        next = 0
    }

    #if !canImport(Darwin)
    /// The kernel's generator, opened once for the process (opening it per batch cost as much as the frames).
    private static let urandom = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
    #endif

    /// Fills `buffer` from the system's generator (the kernel's, through `/dev/urandom`, on Linux); whether it did.
    private static func fillFromSystem(_ buffer: UnsafeMutableRawBufferPointer) -> Bool {
        guard let base = buffer.baseAddress else { return false }
        #if canImport(Darwin)
        arc4random_buf(base, buffer.count)
        return true
        #else
        let descriptor = urandom
        guard descriptor >= 0 else { return false }
        var offset = 0
        while offset < buffer.count {
            let count = read(descriptor, base + offset, buffer.count - offset)
            if count > 0 {
                offset += count
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
        #endif
    }
}
