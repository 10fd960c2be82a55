#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few file-system operations persistence needs, as thin wrappers over POSIX that retry `EINTR` and turn
/// failures into ``JournalError/systemCall(_:path:errno:)`` naming the call and the file.
///
/// Everything here blocks; it runs on the journal and snapshot queues or during start-up, never on the sequencer.
enum FileSystem {
    /// Creates `path` and any missing parents (mode 0755); existing directories are fine.
    static func makeDirectories(_ path: String) throws(JournalError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw .systemCall("mkdir", path: prefix, errno: errno)
            }
            prefix += "/"
        }
    }

    /// Names of the entries in `path`, without `.` and `..`, in no particular order.
    static func listDirectory(_ path: String) throws(JournalError) -> [String] {
        guard let directory = opendir(path) else { throw .systemCall("opendir", path: path, errno: errno) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Whether something exists at `path`.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// Whether `path` is a directory.
    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Size of the file at `path` in bytes.
    static func fileSize(_ path: String) throws(JournalError) -> Int {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .systemCall("stat", path: path, errno: errno) }
        return Int(info.st_size)
    }

    /// The whole content of the file at `path`.
    static func readFile(_ path: String) throws(JournalError) -> [UInt8] {
        let file = try FileDescriptor(opening: path, flags: O_RDONLY)
        defer { file.close() }
        let size = try fileSize(path)
        var bytes = [UInt8](repeating: 0, count: size)
        var filled = 0
        while filled < size {
            let count = bytes.withUnsafeMutableBytes { raw in
                guard let base = raw.baseAddress else { return 0 }
                return pread(file.descriptor, base + filled, size - filled, off_t(filled))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw .systemCall("pread", path: path, errno: errno)
            }
            if count == 0 { break }  // the file shrank while we read it
            filled += count
        }
        if filled < size { bytes.removeSubrange(filled...) }
        return bytes
    }

    /// Removes the file at `path`; a missing file is fine.
    static func removeFile(_ path: String) throws(JournalError) {
        if unlink(path) != 0 && errno != ENOENT { throw .systemCall("unlink", path: path, errno: errno) }
    }

    /// Renames `source` to `destination`, atomically replacing it (POSIX `rename`).
    static func rename(_ source: String, to destination: String) throws(JournalError) {
        #if canImport(Glibc)
        let result = Glibc.rename(source, destination)
        #else
        let result = Darwin.rename(source, destination)
        #endif
        if result != 0 { throw .systemCall("rename", path: source, errno: errno) }
    }

    /// Cuts the file at `path` to `length` bytes and makes the new length durable.
    static func truncate(_ path: String, to length: Int) throws(JournalError) {
        let file = try FileDescriptor(opening: path, flags: O_WRONLY)
        defer { file.close() }
        if ftruncate(file.descriptor, off_t(length)) != 0 { throw .systemCall("ftruncate", path: path, errno: errno) }
        try file.synchronize(path: path)
    }

    /// Flushes the directory entry table of `path`, so that files created, renamed or removed in it survive a
    /// power loss (a file's own fsync does not cover its name).
    static func synchronizeDirectory(_ path: String) throws(JournalError) {
        let directory = try FileDescriptor(opening: path, flags: O_RDONLY | O_DIRECTORY)
        defer { directory.close() }
        try directory.synchronize(path: path)
    }

    /// Writes `bytes` to `path` so that either the old content or the complete new content survives any crash:
    /// write a temporary sibling, fsync it, rename it over `path`, fsync the directory.
    static func writeAtomically(_ path: String, temporaryPath: String, bytes: [UInt8]) throws(JournalError) {
        let file = try FileDescriptor(opening: temporaryPath, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644)
        do throws(JournalError) {
            try file.writeAll(bytes, path: temporaryPath)
            try file.synchronize(path: temporaryPath)
        } catch {
            file.close()
            try? removeFile(temporaryPath)  // a full disk should not stay full of a half-written snapshot
            throw error
        }
        file.close()
        try rename(temporaryPath, to: path)
        try synchronizeDirectory(directoryName(of: path))
    }

    /// The directory part of `path` (`"."` when there is none).
    static func directoryName(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        if slash == path.utf8.startIndex { return "/" }
        return String(path[..<slash])
    }
}
