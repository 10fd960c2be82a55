import DataModel

/// In the sharded format (read only to migrate it): one shard's copy of what the tree holds at wide locations (shallower than the shard depth) besides children:
/// leaves and priorities. Shard trees cannot hold these, because a shard only has its own slice of a wide node's
/// children and Firebase drops the priority of a node without children.
///
/// ``leaves`` and ``priorities`` are replicated: only multi-shard operations that hold every shard change them, and
/// they give every shard the same change. ``deadLeaves`` is the one per-shard part: when a write inside one shard
/// lands below a wide leaf, Firebase turns that leaf into an object keeping the leaf's priority (§1); the shard
/// records the conversion locally instead of coordinating, and a wide leaf counts as alive only while no shard has
/// it in ``deadLeaves``. Conversion is idempotent, so two shards converting the same leaf agree.
///
/// Known deviation: a priority on a wide node survives the node becoming empty through removals inside single
/// shards, and shows again if children come back the same way; Firebase would have dropped it. Removals made at
/// wide paths (which hold every shard) drop it exactly.
struct WideState: Sendable, Equatable {
    /// Leaves stored at wide locations (with their priorities).
    var leaves: [Path: Node] = [:]
    /// Priorities of object nodes at wide locations.
    var priorities: [Path: Priority] = [:]
    /// Wide leaves this shard has turned into objects.
    var deadLeaves: Set<Path> = []

    /// Whether the state holds nothing (the common case; it lets writes skip every wide check).
    var isEmpty: Bool { leaves.isEmpty && priorities.isEmpty && deadLeaves.isEmpty }

    /// Removes every entry at or below `path`.
    mutating func clear(under path: Path) {
        if path.isRoot {
            self = WideState()
            return
        }
        leaves = leaves.filter { !path.contains($0.key) }
        priorities = priorities.filter { !path.contains($0.key) }
        deadLeaves = deadLeaves.filter { !path.contains($0) }
    }
}
