#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a namespace keeps its files, all inside its own directory:
///
/// ```
/// <directory>/LOCK                      advisory lock: one process at a time
/// <directory>/state.canopy              the latest snapshot of the log's state (state.canopy.tmp while written)
/// <directory>/log/<first sequence>.log  the journal of log entries after it
/// ```
///
/// Directories written before the namespace log (a sharded `snapshot.canopy` and `journal/<shard>/`) are
/// migrated at start-up (``LogLoader``).
struct NamespaceFiles: Sendable {
    /// The namespace directory.
    let directory: String

    var statePath: String { directory + "/state.canopy" }
    var temporaryStatePath: String { statePath + ".tmp" }
    var logDirectory: String { directory + "/log" }

    var lockPath: String { directory + "/LOCK" }
    /// The snapshot of an earlier, unreleased format, which start-up refuses with the way out.
    var earlierFormatSnapshotPath: String { directory + "/snapshot.canopy" }
}

/// An exclusive `flock` on a namespace's `LOCK` file, held while a store (or an offline command) uses it.
final class DirectoryLock: Sendable {
    private let file: FileDescriptor

    /// How long to keep trying when the lock is taken: a lock released a moment ago can still look taken while a
    /// child process forked in between (by any thread, e.g. `system(3)`) has not yet reached `exec` and closed its
    /// inherited copy of the descriptor.
    static let maxWaitMilliseconds = 2000

    /// Takes the lock.
    /// - Throws: ``JournalError/locked(directory:)`` when another process holds it.
    init(path: String, directory: String) throws(JournalError) {
        file = try FileDescriptor(opening: path, flags: O_RDWR | O_CREAT, mode: 0o644)
        var waited = 0
        while true {
            let acquired: Bool
            do throws(JournalError) {
                acquired = try file.tryLock(path: path)
            } catch {
                file.close()
                throw error
            }
            if acquired { return }
            guard waited < Self.maxWaitMilliseconds else {
                file.close()
                throw .locked(directory: directory)
            }
            usleep(10_000)
            waited += 10
        }
    }

    /// Releases the lock (closing the descriptor releases the `flock`).
    func unlock() {
        file.close()
    }
}
