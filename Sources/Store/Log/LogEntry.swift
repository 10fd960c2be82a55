import DataModel

/// One entry of a namespace's log: an operation at its place in the namespace's single order.
///
/// The log is what makes a namespace deterministic. Everything that decides an entry's effect is in the entry
/// (its sequence number, the server time it was given when it was sequenced, who made it and under which rules
/// version) or in the state the earlier entries built, so applying the entries in order (``LogState/apply(_:)``)
/// gives the same tree and the same accept/reject decisions every time: live, when replaying the journal at
/// start-up, or on another node of a cluster.
public struct LogEntry: Sendable, Equatable {
    /// The entry's place in the namespace's order (1, 2, 3, … without gaps).
    public let sequence: UInt64
    /// The server time in milliseconds since the Unix epoch, assigned when the entry was sequenced and never lower
    /// than the previous entry's: server timestamps, the rules' `now` and REST push ids all derive from it.
    public let timestamp: Double
    /// What the entry does.
    public let operation: LogOperation

    /// An entry.
    public init(sequence: UInt64, timestamp: Double, operation: LogOperation) {
        self.sequence = sequence
        self.timestamp = timestamp
        self.operation = operation
    }
}

/// What a log entry does.
public enum LogOperation: Sendable, Equatable {
    /// A write by `caller`, judged by the rules of `rulesVersion` (the version in force when it was sequenced).
    case write(StoreWrite, caller: WriteCaller, rulesVersion: UInt64)
    /// Puts a rules revision in force for every later entry.
    case rules(RulesRevision)
    /// Cluster mode: `node` arms the onDisconnect write of its connection `session` (`nil`: disarms it). Every
    /// replica holds it, so the write runs even when the node dies (``nodeDown(_:lastHeard:)``).
    case armDisconnect(node: String, session: String, write: StoreWrite?)
    /// Cluster mode: connection `session` of `node` ended: its armed write runs now, as a privileged write.
    case disconnect(node: String, session: String)
    /// Cluster mode: `node` is alive at this entry's time.
    case heartbeat(node: String)
    /// Cluster mode: `node` is gone if the log holds nothing from it after its entry with sequence number
    /// `lastHeard` (the proposer saw nothing newer for a while, timed by its own monotonic clock); then every write
    /// it armed runs, in one update, its sessions in order of their ids. The decision uses no wall-clock time, so a
    /// node whose clock jumps neither declares live nodes down nor keeps dead ones alive.
    case nodeDown(_ node: String, lastHeard: UInt64)
}

/// Who made a write, as the security rules see it.
public enum WriteCaller: Sendable, Equatable {
    /// Not judged by the rules: the admin credential, onDisconnect writes (judged when registered), offline tools.
    case privileged
    /// Judged by the rules with this `auth` (`nil` for a caller without credentials).
    case user(auth: JSONValue?)
}

/// A version of the security rules as the log records it: the source text, so that replaying the log compiles
/// exactly the rules that judged the writes after it.
public struct RulesRevision: Sendable, Equatable {
    /// Increases by one per revision of a namespace; 0 is the namespace's initial state (no rules).
    public let version: UInt64
    /// The rules file's text; `nil` for no rules (every write allowed).
    public let source: [UInt8]?

    /// A revision.
    public init(version: UInt64, source: [UInt8]?) {
        self.version = version
        self.source = source
    }

    /// The revision of a new namespace.
    public static let initial = RulesRevision(version: 0, source: nil)
}
