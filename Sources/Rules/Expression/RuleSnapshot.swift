import DataModel

/// A `RuleDataSnapshot` (security-rules.md §6): a node of the tree before (`root`, `data`) or after (`newData`) the
/// operation, with enough of its location to answer `parent()`.
///
/// The location is a prefix of the evaluation's own path plus extra keys, so `data`, `newData` and `root` cost no
/// allocation and `child('a/b')` with a literal path shares the keys compiled at load.
struct RuleSnapshot: Sendable {
    /// The node at this location (empty when nothing is there).
    var node: Node
    /// Whether this looks at the tree after the operation.
    var isNew: Bool
    /// How many keys of the evaluation path lead to the base of this location.
    var baseDepth: Int
    /// Keys below the base.
    var extra: ArraySlice<Key>
}
