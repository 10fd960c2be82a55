#if canImport(Glibc)
import Glibc
#endif

/// One buffer per thread that `SSL_read` decrypts into before the plaintext is copied out.
///
/// Sessions run on whichever Dispatch worker thread serves their connection's queue, and a session never calls
/// into another session while it holds the buffer, so one buffer per thread is enough: memory grows with the
/// number of threads (a handful), not with the number of connections (tens of thousands). The rejected
/// alternatives were a buffer per session (16 KiB × every idle connection) and reading straight into the
/// returned array (which would either zero-fill or over-allocate each result).
enum ReadScratch {
    /// Bytes per buffer: the largest plaintext one record can carry (RFC 8446 §5.1), so one read takes a record.
    static let byteCount = 16_384

    /// The thread-specific slot; its destructor frees a thread's buffer when the thread exits.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key) { buffer in free(buffer) }
        precondition(result == 0, "pthread_key_create failed: \(result)")
        return key
    }()

    /// Calls `body` with this thread's buffer, allocating it on the thread's first use.
    static func withBuffer<Result>(_ body: (UnsafeMutableBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        let base: UnsafeMutableRawPointer
        if let existing = pthread_getspecific(key) {
            base = existing
        } else {
            guard let fresh = malloc(byteCount) else { preconditionFailure("out of memory for the TLS read buffer") }
            pthread_setspecific(key, fresh)
            base = fresh
        }
        let bytes = base.bindMemory(to: UInt8.self, capacity: byteCount)
        return try body(UnsafeMutableBufferPointer(start: bytes, count: byteCount))
    }
}
