import DataModel
import Synchronization

/// What a ``WriteAuthorizer`` decides on: the whole tree before and after one write.
public struct WriteAuthorization: Sendable {
    /// The write being decided on.
    public let write: StoreWrite
    /// The whole tree just before the write.
    public let oldRoot: Node
    /// The whole tree with the write applied and its server values resolved.
    public let newRoot: Node
    /// The server time (milliseconds) the write's server values were resolved with — the rules' `now`.
    public let timestamp: Double
    /// The locations the write changes.
    public let changes: [Change]
}

/// Decides whether a write may be applied (security rules); runs on a store queue while the write is being applied,
/// so it sees exactly the state the write applies to. Must be fast and must not block.
public typealias WriteAuthorizer = @Sendable (WriteAuthorization) -> Bool

/// One consistent whole tree across all shards, for security rules that read any location (`root`).
///
/// Every applied write moves it forward in the same step in which its shard's state changes, under one mutex, so it
/// always holds every write applied so far (each shard's in its own order) and never a partial write. Kept only
/// when ``StoreConfiguration/tracksWholeTree`` is set: it costs one lock and one path copy per write.
final class WholeTree: Sendable {
    private let root: Mutex<Node>

    init(_ root: Node) {
        self.root = Mutex(root)
    }

    /// The current whole tree (copy-on-write: taking it is cheap).
    var snapshot: Node {
        root.withLock { $0 }
    }

    /// Applies `changes` if `authorizer` allows the result; returns whether they were applied.
    func advance(by changes: [Change], of write: StoreWrite, timestamp: Double, authorizer: WriteAuthorizer) -> Bool {
        root.withLock { current in
            var next = current
            for change in changes { next.set(change.newValue, at: change.path) }
            guard authorizer(WriteAuthorization(
                write: write, oldRoot: current, newRoot: next, timestamp: timestamp, changes: changes))
            else { return false }
            current = next
            return true
        }
    }

    /// Applies `changes` of a write nobody needs to authorize, in place.
    func advance(by changes: [Change]) {
        root.withLock { current in
            for change in changes { current.set(change.newValue, at: change.path) }
        }
    }
}
