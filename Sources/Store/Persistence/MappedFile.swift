import Primitives

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A whole file mapped read-only and private, for reading a snapshot without holding a copy of it in memory.
///
/// Why: a snapshot is decoded once, front to back, into a tree several times its size. Read into an array, the
/// file's bytes stay resident until the whole tree is built, which is the process's peak. Mapped, the pages already
/// read are handed back with ``release(_:)`` as decoding proceeds (they are clean, and would be read back from the
/// file if touched again), so the peak is the tree plus a few megabytes. The namespace's directory lock keeps
/// other processes from replacing the file while it is mapped (snapshots are replaced by rename, which leaves a
/// mapping of the old file intact anyway).
final class MappedFile {
    /// The file's bytes; valid while this object lives.
    let bytes: UnsafeRawBufferPointer
    /// The system's page size in bytes.
    static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// Maps the file at `path`; an empty file maps to an empty buffer.
    init(path: String) throws(JournalError) {
        let file = try FileDescriptor(opening: path, flags: O_RDONLY)
        defer { file.close() }
        var info = stat()
        guard fstat(file.descriptor, &info) == 0 else { throw .systemCall("fstat", path: path, errno: errno) }
        let size = Int(info.st_size)
        guard size > 0 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, file.descriptor, 0), base != MAP_FAILED else {
            throw .systemCall("mmap", path: path, errno: errno)
        }
        bytes = UnsafeRawBufferPointer(start: base, count: size)
    }

    deinit {
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
    }

    /// Gives the whole pages inside `range` (byte offsets of ``bytes``) back to the system; reading them again
    /// reads the file again.
    func release(_ range: Range<Int>) {
        MappedFile.release(UnsafeRawBufferPointer(rebasing: bytes[range]))
    }

    /// Gives the whole pages inside `region` (part of a private read-only file mapping) back to the system.
    static func release(_ region: UnsafeRawBufferPointer) {
        guard let base = region.baseAddress else { return }
        let start = (Int(bitPattern: base) + pageSize - 1) / pageSize * pageSize
        let end = (Int(bitPattern: base) + region.count) / pageSize * pageSize
        guard end > start, let pointer = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(pointer, end - start, MADV_DONTNEED)
    }

    /// CRC-32C of `range`, computed in slices whose pages are released as soon as they are summed, so checking a
    /// large section does not make it resident.
    func checksum(_ range: Range<Int>, sliceBytes: Int) -> UInt32 {
        var crc: UInt32 = 0
        var start = range.lowerBound
        while start < range.upperBound {
            let end = min(start + sliceBytes, range.upperBound)
            crc = CRC32C.update(crc, with: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
            release(start..<end)
            start = end
        }
        return crc
    }
}
