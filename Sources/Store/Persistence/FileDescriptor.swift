#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file descriptor used by persistence; closed explicitly with ``close()``.
///
/// A plain struct rather than a class with `deinit`: each owner (a journal segment, a snapshot writer) has one
/// obvious place where the file is closed, and copying the number around is harmless.
struct FileDescriptor: Sendable {
    /// The descriptor number.
    let descriptor: Int32

    /// Opens `path` with `open(2)` flags (`O_CLOEXEC` is always added).
    init(opening path: String, flags: Int32, mode: mode_t = 0) throws(JournalError) {
        var result: Int32
        repeat {
            result = open(path, flags | O_CLOEXEC, mode)
        } while result < 0 && errno == EINTR
        guard result >= 0 else { throw .systemCall("open", path: path, errno: errno) }
        descriptor = result
    }

    /// Writes every byte at the current offset, retrying short writes and `EINTR`; `path` names the file in errors.
    func writeAll(_ bytes: UnsafeRawBufferPointer, path: String) throws(JournalError) {
        guard var base = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let written = write(descriptor, base, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                throw .systemCall("write", path: path, errno: errno)
            }
            base += written
            remaining -= written
        }
    }

    /// Writes every byte of `bytes` at the current offset.
    func writeAll(_ bytes: [UInt8], path: String) throws(JournalError) {
        try withBytes(of: bytes) { (raw) throws(JournalError) in try writeAll(raw, path: path) }
    }

    /// Writes every byte of `bytes` at file offset `offset` (`pwrite(2)`), leaving the current offset alone.
    func writeAll(_ bytes: [UInt8], path: String, at offset: Int) throws(JournalError) {
        var done = 0
        while done < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                guard let base = raw.baseAddress else { return 0 }
                return pwrite(descriptor, base + done, raw.count - done, off_t(offset + done))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw .systemCall("pwrite", path: path, errno: errno)
            }
            done += written
        }
    }

    /// Cuts the file to `length` bytes (`ftruncate(2)`); appends continue from there.
    func truncate(to length: Int, path: String) throws(JournalError) {
        if ftruncate(descriptor, off_t(length)) != 0 { throw .systemCall("ftruncate", path: path, errno: errno) }
    }

    /// Makes written data durable with `fdatasync(2)` (data plus the metadata needed to read it, i.e. the size).
    func synchronize(path: String) throws(JournalError) {
        var result: Int32
        repeat {
            #if canImport(Glibc)
            result = fdatasync(descriptor)
            #else
            result = fsync(descriptor)
            #endif
        } while result != 0 && errno == EINTR
        if result != 0 { throw .systemCall("fdatasync", path: path, errno: errno) }
    }

    /// Takes an exclusive advisory lock (`flock(LOCK_EX | LOCK_NB)`); returns `false` when another process has it.
    func tryLock(path: String) throws(JournalError) -> Bool {
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return true }
        if errno == EWOULDBLOCK { return false }
        throw .systemCall("flock", path: path, errno: errno)
    }

    /// Closes the descriptor.
    func close() {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #else
        _ = Darwin.close(descriptor)
        #endif
    }
}
