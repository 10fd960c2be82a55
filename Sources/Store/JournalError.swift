/// Failures reading or writing a namespace's journal and snapshot files.
///
/// Every case names the file, so that a message from start-up tells the operator exactly what to inspect,
/// truncate (`--repair`) or restore.
public enum JournalError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A record in the middle of a journal failed its checksum or framing; start-up stops here unless repair is on.
    case corrupt(file: String, offset: Int)
    /// A record passed its checksum but its content could not be decoded (written by an incompatible version).
    case undecodableRecord(file: String, offset: Int, reason: String)
    /// The snapshot file is damaged or not a snapshot.
    case corruptSnapshot(file: String, reason: String)
    /// A system call failed; `errno` is the C error number.
    case systemCall(String, path: String, errno: Int32)
    /// A previous write or fsync failed, so the journal no longer accepts records (the on-disk state is unknown;
    /// restart to recover from what is on disk).
    case journalFailed(file: String)
    /// Another process holds the namespace directory's lock (a running server, or another offline command).
    case locked(directory: String)
    /// The replicated log of a clustered namespace could not be opened.
    case replicationFailed(String)

    /// A one-line message for logs and command-line output.
    public var description: String {
        switch self {
        case .corrupt(let file, let offset):
            return "journal \(file) is corrupt at byte offset \(offset) (rerun with --repair to truncate there)"
        case .undecodableRecord(let file, let offset, let reason):
            return "journal \(file) has an undecodable record at byte offset \(offset): \(reason)"
        case .corruptSnapshot(let file, let reason):
            return "snapshot \(file) is unreadable: \(reason)"
        case .systemCall(let name, let path, let errno):
            return "\(name)(\(path)) failed with errno \(errno)"
        case .journalFailed(let file):
            return "journal \(file) failed earlier and accepts no more records"
        case .locked(let directory):
            return "\(directory) is locked by another process"
        case .replicationFailed(let reason):
            return "the replicated log could not be opened: \(reason)"
        }
    }
}
