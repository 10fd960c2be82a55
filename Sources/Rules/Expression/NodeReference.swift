import DataModel

/// A snapshot expression's node without the location a ``RuleSnapshot`` keeps for `parent()`: what every other
/// snapshot method (`val()`, `exists()`, `hasChild(…)`, …) needs, computed without building key arrays.
///
/// While the keys walked so far follow the evaluation's own path, the reference only counts them
/// (``pathDepth``) and takes the node from the context's levels, which are already looked up.
struct NodeReference {
    /// The node reached, or its parent while ``pendingKey`` is set (empty when nothing is there).
    var node: Node
    /// The last key of a walk that left the evaluation path, not looked up yet: `exists()` then asks the parent
    /// whether it has that child instead of building the child (a packed record's value would be decoded).
    var pendingKey: Key?
    /// Whether this looks at the tree after the operation.
    var isNew: Bool
    /// How many keys of the evaluation path lead here, while the location is a prefix of that path; `nil` once
    /// a key left it.
    var pathDepth: Int?

    /// The node of a snapshot value.
    init(_ snapshot: RuleSnapshot) {
        node = snapshot.node
        isNew = snapshot.isNew
        pathDepth = snapshot.extra.isEmpty ? snapshot.baseDepth : nil
    }

    /// The node at the first `pathDepth` keys of the evaluation path.
    init(node: Node, isNew: Bool, pathDepth: Int) {
        self.node = node
        self.isNew = isNew
        self.pathDepth = pathDepth
    }

    /// A node off the evaluation path (as a base for `hasChild`).
    init(offPath node: Node) {
        self.node = node
        self.isNew = false
        self.pathDepth = nil
    }

    /// The node referred to.
    var resolved: Node {
        guard let pendingKey else { return node }
        return node.child(pendingKey)
    }

    /// Whether the node referred to exists.
    var exists: Bool {
        guard let pendingKey else { return !node.isEmpty }
        return node.hasChild(pendingKey)
    }

    /// Moves down to child `key` (off the evaluation path), looking up the previous pending key.
    mutating func step(_ key: Key) {
        if let pendingKey { node = node.child(pendingKey) }
        pendingKey = key
    }
}
