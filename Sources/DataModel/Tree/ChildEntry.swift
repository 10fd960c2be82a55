/// A child of a node: its key and its (never empty) value.
public struct ChildEntry: Sendable, Equatable {
    /// The child's key.
    public var key: Key
    /// The child's node; never empty inside a stored tree.
    public var node: Node

    /// Pairs a key with a node.
    public init(key: Key, node: Node) {
        self.key = key
        self.node = node
    }
}

extension ChildEntry: SortedTreeElement {
    var sortKey: Key { key }

    static func compare(_ a: Key, _ b: Key) -> Int { Key.compare(a, b) }

    static func withProbe<R>(_ key: Key, _ body: (KeyProbe) throws -> R) rethrows -> R { try key.withProbe(body) }

    static func order(_ element: borrowing ChildEntry, _ probe: KeyProbe) -> Int { probe.order(of: element.key) }

    static func order(key: borrowing Key, _ probe: KeyProbe) -> Int { probe.order(of: key) }
}
