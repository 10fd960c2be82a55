import DataModel

/// A write submitted to a ``Store``: Firebase's set (`p`, REST `PUT`/`DELETE`), update (`m`, REST `PATCH`) or
/// push (REST `POST`).
///
/// Values are ``WriteValue``s as the JSON reader produces them, with server-value placeholders still unresolved;
/// the store resolves them when it applies the write, against the data as it is just before the write.
public enum StoreWrite: Sendable, Equatable {
    /// Replaces the node (or the priority) at the target. With `expectedHash`, this is a compare-and-set: it is
    /// applied only if the hash of the current node at the target's path (wire-protocol.md §8.2) equals it, and
    /// otherwise rejected with ``StoreError/stale(current:)``. An empty hash expects an empty location.
    case set(WriteTarget, WriteValue, expectedHash: String?)
    /// Replaces each child entry (paths relative to the given path) as one atomic write: all entries are applied
    /// or none, and no reader sees a state in between. The parent's priority is left alone. Entries must not
    /// overlap (the SDKs guarantee it); if they do, they are applied in order.
    case update(Path, [UpdateEntry])
    /// Sets a new child of the path, named by a push id derived from the write's log entry (its timestamp and
    /// sequence number), so ids are time-ordered, unique in the namespace, and the same when the log is replayed.
    case push(Path, WriteValue)

    /// A plain set of a node.
    public static func set(_ path: Path, _ node: Node) -> StoreWrite {
        .set(.node(path), WriteValue(node: node), expectedHash: nil)
    }

    /// Deletes the node at `path` (a set of `null`).
    public static func remove(_ path: Path) -> StoreWrite {
        .set(.node(path), WriteValue(node: .empty), expectedHash: nil)
    }
}

extension UpdateEntry {
    /// An entry writing `value` at the relative `target` (positional form, for building writes in code).
    public init(_ target: WriteTarget, _ value: WriteValue) {
        self.init(target: target, value: value)
    }

    /// An entry writing a plain node at the relative `path`.
    public init(_ path: Path, _ node: Node) {
        self.init(target: .node(path), value: WriteValue(node: node))
    }
}

/// One location changed by a write, with its value before and after.
public struct Change: Sendable, Equatable {
    /// The written location (the target of a set, or one entry of an update); for a priority write, the node
    /// whose priority changed.
    public let path: Path
    /// The node at ``path`` before the write.
    public let oldValue: Node
    /// The node at ``path`` after the write, server values resolved.
    public let newValue: Node

    /// Creates a change.
    public init(path: Path, oldValue: Node, newValue: Node) {
        self.path = path
        self.oldValue = oldValue
        self.newValue = newValue
    }
}

/// What the store reports to its observer for every applied write, on its sequencer, in the namespace's order.
public struct ChangeRecord: Sendable {
    /// The write's log sequence number.
    public let sequence: UInt64
    /// The changed locations, in apply order, with whole-tree values.
    public let changes: [Change]
    /// The update's path when the write was an update (`m`, REST `PATCH`), `nil` for a set: listeners report an
    /// update as one (wire `m`, stream `patch`) even when it changed a single location.
    public let updateBase: Path?

    /// Creates a record.
    public init(sequence: UInt64, changes: [Change], updateBase: Path? = nil) {
        self.sequence = sequence
        self.changes = changes
        self.updateBase = updateBase
    }
}

extension StoreWrite {
    /// The update's path for an update, `nil` for a set.
    var updateBase: Path? {
        if case .update(let base, _) = self { return base }
        return nil
    }
}

/// The result of an applied write, delivered once it is durable under the store's fsync policy.
public struct WriteOutcome: Sendable {
    /// A plain set changes one location; keeping that one inline spares the hot path an array per write.
    private enum Storage: Sendable {
        case one(Change)
        case many([Change])
    }

    private let storage: Storage

    init(changes: [Change]) {
        storage = .many(changes)
    }

    init(change: Change) {
        storage = .one(change)
    }

    /// The changed locations with their old and new values (server values resolved), as observers saw them.
    public var changes: [Change] {
        switch storage {
        case .one(let change): return [change]
        case .many(let changes): return changes
        }
    }
}
