/// Failures reading or writing a shard's journal.
public enum JournalError: Error, Equatable, Sendable {
    /// A record failed its checksum.
    case corrupt(file: String, offset: Int)
}
