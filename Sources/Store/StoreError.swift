import DataModel

/// Why the store rejected or failed a write.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A compare-and-set found a different current value; nothing was changed. `current` is the node now at the
    /// target (what the client must see before it retries; wire status `datastale`).
    case stale(current: Node)
    /// A priority write carried something other than a number, a string, `null` or a server value.
    case invalidPriority
    /// A server value could not be resolved (an increment overflowed the number range).
    case serverValue(ValueError)
    /// The write was applied in memory but its journal record could not be made durable; the store accepts no
    /// further writes, and whether this one survives a restart is unknown.
    case persistence(JournalError)
    /// The store is shut down or its persistence failed earlier.
    case unavailable
    /// The disk is full: nothing was changed; writes are accepted again once space is freed.
    case diskFull(JournalError)
    /// The write's authorizer refused it (security rules); nothing was changed.
    case denied
    /// Cluster mode: the write does not fit in one message of the replicated log (`limit` bytes); nothing was
    /// changed.
    case tooLarge(bytes: Int, limit: Int)

    /// A one-line message.
    public var description: String {
        switch self {
        case .stale: return "transaction hash does not match"
        case .invalidPriority: return "invalid priority: must be a number, a string or null"
        case .serverValue(let error): return "server value: \(error)"
        case .persistence(let error): return "persistence failed: \(error)"
        case .unavailable: return "store unavailable"
        case .diskFull(let error): return "the disk is full, writes are refused until space is freed (\(error))"
        case .denied: return "permission denied"
        case .tooLarge(let bytes, let limit):
            return "write too large for the cluster's log: \(bytes) bytes encoded, at most \(limit)"
        }
    }
}
