/// What start-up found and did, for the caller to log (the store itself does not log).
public struct LoadReport: Sendable, Equatable {
    /// Something start-up dropped from a journal.
    public struct Discard: Sendable, Equatable, CustomStringConvertible {
        /// Why the data was dropped.
        public enum Reason: Sendable, Equatable {
            /// The last write of the journal was torn by a crash (never acknowledged).
            case tornTail
            /// Corruption, dropped because repair was requested.
            case repairedCorruption
            /// A multi-shard write whose part is missing from another participant's journal (never acknowledged),
            /// and everything the shard journaled after it.
            case incompleteTransaction(id: UInt64)
        }

        /// The journal segment.
        public let file: String
        /// Byte offset from which the file was cut.
        public let offset: Int
        /// Why.
        public let reason: Reason

        /// A log line.
        public var description: String {
            switch reason {
            case .tornTail: return "discarded torn final record of \(file) at offset \(offset)"
            case .repairedCorruption: return "repair truncated corrupt \(file) at offset \(offset)"
            case .incompleteTransaction(let id):
                return "discarded incomplete multi-shard write \(id) in \(file) from offset \(offset)"
            }
        }
    }

    /// Whether a snapshot existed (otherwise the namespace was created empty).
    public var loadedSnapshot = false
    /// Journal records (cluster mode: log entries) applied on top of the snapshot.
    public var replayedRecords = 0
    /// Cluster mode: the log position of the snapshot restored (0 when the log was replayed from its start).
    public var snapshotPosition: UInt64 = 0
    /// Data dropped from journals.
    public var discards: [Discard] = []
    /// Wall-clock time start-up took, in seconds.
    public var seconds: Double = 0
    /// Of ``seconds``, the time spent reading and replaying the journal.
    public var replaySeconds: Double = 0
}
