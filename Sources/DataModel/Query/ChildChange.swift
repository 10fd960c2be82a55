/// One child of a location that changed in a write: its key and its value before and after (either may be empty).
public struct ChildChange: Sendable, Equatable {
    /// The child's key.
    public var key: Key
    /// The value before the write (``Node/empty`` if the child was added).
    public var old: Node
    /// The value after the write (``Node/empty`` if the child was removed).
    public var new: Node

    /// Creates a change record.
    public init(key: Key, old: Node, new: Node) {
        self.key = key
        self.old = old
        self.new = new
    }
}

extension Node {
    /// The children that differ between two versions of a location, in key order, in O(n + m).
    ///
    /// Subtrees that are the same storage (untouched by copy-on-write writes) compare in O(1). Leaves and empty
    /// nodes have no children, so replacing an object with a leaf removes every child.
    public static func childChanges(from old: Node, to new: Node) -> [ChildChange] {
        var changes: [ChildChange] = []
        var oldChildren = old.children
        var newChildren = new.children
        var oldEntry = oldChildren.next()
        var newEntry = newChildren.next()
        while oldEntry != nil || newEntry != nil {
            switch (oldEntry, newEntry) {
            case (let before?, let after?) where before.key == after.key:
                if before.node != after.node { changes.append(ChildChange(key: before.key, old: before.node, new: after.node)) }
                oldEntry = oldChildren.next()
                newEntry = newChildren.next()
            case (let before?, nil):
                changes.append(ChildChange(key: before.key, old: before.node, new: .empty))
                oldEntry = oldChildren.next()
            case (let before?, let after?) where before.key < after.key:
                changes.append(ChildChange(key: before.key, old: before.node, new: .empty))
                oldEntry = oldChildren.next()
            case (_, let after?):
                changes.append(ChildChange(key: after.key, old: .empty, new: after.node))
                newEntry = newChildren.next()
            case (nil, nil):
                break
            }
        }
        return changes
    }
}
