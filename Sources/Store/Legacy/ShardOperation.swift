import DataModel

/// In the sharded format (read only to migrate it): one physical change to a shard's state, what its journal
/// recorded and what replay re-applies.
///
/// Writes are planned into these with server values already resolved and every decision that needed other
/// shards (wide leaf conversions, priorities of emptied wide nodes) already taken, so applying a list of them is
/// deterministic and depends only on the shard's own state. That is what lets each shard replay its journal alone.
enum ShardOperation: Sendable, Equatable {
    /// Replace the node at the path in the shard's tree (Firebase set semantics, ``Node/set(_:at:)``).
    case set(Path, Node)
    /// Set or clear the priority of the node at the path in the shard's tree (no-op on an empty node).
    case setPriority(Path, Priority?)
    /// Remove every wide leaf, wide priority and conversion mark at or below the path.
    case clearWide(Path)
    /// Store a leaf at a wide path (replicated to every shard); clears this shard's conversion mark there.
    case setWideLeaf(Path, Node)
    /// Set or clear the priority of the object at a wide path (replicated to every shard).
    case setWidePriority(Path, Priority?)
    /// Record that this shard turned the wide leaf at the path into an object.
    case markWideLeafDead(Path)
    /// Remove the wide leaf at the path and its conversion mark, leaving entries below it (finishes a conversion
    /// once a multi-shard write touches the location).
    case removeWideLeaf(Path)
}

/// Everything one shard owns: its slice of the tree, its copy of the wide state, and how many records it applied.
struct ShardState: Sendable {
    /// The shard's slice of the tree, rooted at the namespace root (wide levels hold only children).
    var root: Node = .empty
    /// Leaves and priorities at wide locations.
    var wide = WideState()
    /// Sequence number of the last record applied (0 before the first).
    var sequence: UInt64 = 0

    /// Applies one operation.
    mutating func apply(_ operation: ShardOperation) {
        switch operation {
        case .set(let path, let node):
            root.set(node, at: path)
        case .setPriority(let path, let priority):
            root.modifyDescendant(at: path) { $0.setPriority(priority) }
        case .clearWide(let path):
            if !wide.isEmpty { wide.clear(under: path) }
        case .setWideLeaf(let path, let node):
            wide.leaves[path] = node
            wide.deadLeaves.remove(path)
        case .setWidePriority(let path, let priority):
            wide.priorities[path] = priority
        case .markWideLeafDead(let path):
            wide.deadLeaves.insert(path)
        case .removeWideLeaf(let path):
            wide.leaves[path] = nil
            wide.deadLeaves.remove(path)
        }
    }

    /// Applies operations in order.
    mutating func apply(_ operations: [ShardOperation]) {
        for operation in operations { apply(operation) }
    }
}
