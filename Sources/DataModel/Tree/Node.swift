/// A value in the tree with Firebase semantics (data-model.md §1): empty, a leaf, or a non-empty map of children,
/// each non-empty node with an optional ``Priority``.
///
/// `Node` is an immutable-looking value with copy-on-write storage. Decision: the shard keeps its tree as a `Node`
/// and mutates it through `mutating` methods, which change storage in place while it is uniquely referenced and copy
/// only the shared nodes along the written path otherwise. A snapshot (for the snapshot writer, a read, or an event)
/// is a plain copy of the value: O(1), safe to send to another queue, and unaffected by later writes. Rejected
/// alternative: a mutable class tree owned by the shard queue — cheapest writes, but every snapshot would be an O(n)
/// deep copy or would block the shard while a 100 MB tree is serialized.
///
/// Invariants the API maintains: a node with no children is ``empty`` (there are no empty objects); children are
/// never empty; an empty node has no priority; deleting the last child also deletes the parent's priority; writing
/// a child below a leaf turns it into an object that keeps the leaf's priority (the SDK's
/// `LeafNode.updateImmediateChild`).
///
/// Memory: small objects whose children are all plain leaves or such packed objects (most records) are packed into
/// one allocation (``LeafRecord``); other leaves are stored inline in their parent's child entry (40 bytes including
/// the key; strings up to 15 UTF-8 bytes need no allocation); other objects with up to 64 children are one sorted array,
/// larger ones a B+-tree; priorities, which most nodes lack, live in a separate box so they cost nothing when absent.
public struct Node: Sendable {
    enum Storage: Sendable {
        case empty
        case bool(Bool)
        case number(Double)
        case string(String)
        case children(ChildMap)
        /// An object of plain leaves and nested records in packed form (see ``LeafRecord``).
        case record(LeafRecord)
        case prioritized(PrioritizedNode)
    }

    var storage: Storage

    init(storage: Storage) {
        self.storage = storage
    }

    /// The empty node (`null`): the location does not exist.
    public static let empty = Node(storage: .empty)

    /// A leaf; `-0` is stored as `0`.
    ///
    /// - Precondition: numbers are finite (parsers reject NaN and ±Infinity before they get here).
    public init(_ value: LeafValue, priority: Priority? = nil) {
        switch value {
        case .bool(let flag):
            storage = .bool(flag)
        case .number(let number):
            precondition(number.isFinite, "Node numbers must be finite")
            storage = .number(number == 0 ? 0 : number)
        case .string(let text):
            storage = .string(text)
        }
        if let priority { storage = .prioritized(PrioritizedNode(content: Node(storage: storage), priority: priority)) }
    }

    /// An object from children in any order; empty children are dropped and a later duplicate key wins.
    /// With no remaining children the result is ``empty`` and `priority` is dropped.
    public init(children: some Sequence<ChildEntry>, priority: Priority? = nil) {
        var entries = ContiguousArray(children.lazy.filter { !$0.node.isEmpty })
        var sorted = true
        for index in entries.indices.dropFirst() where Key.compare(entries[index - 1].key, entries[index].key) >= 0 {
            sorted = false
            break
        }
        if !sorted {
            // Stable sort keeps input order among duplicates; the last one wins below.
            let ordered = entries.enumerated().sorted { left, right in
                let order = Key.compare(left.element.key, right.element.key)
                return order != 0 ? order < 0 : left.offset < right.offset
            }
            entries.removeAll(keepingCapacity: true)
            for (_, entry) in ordered {
                if let last = entries.last, last.key == entry.key {
                    entries[entries.count - 1] = entry
                } else {
                    entries.append(entry)
                }
            }
        }
        self.init(sortedChildren: entries, priority: priority)
    }

    /// An object from non-empty children already in strictly increasing key order, taken without checking or
    /// copying: parsers, and loaders reading back data this process wrote under a checksum, use it to skip the
    /// order check, the sort and the generic `Sequence` path of ``init(children:priority:)``. With no children the
    /// result is ``empty`` and `priority` is dropped.
    ///
    /// - Precondition: keys strictly increase in Firebase key order and no node is empty (not verified).
    public init(sortedChildren entries: ContiguousArray<ChildEntry>, priority: Priority?) {
        if entries.isEmpty {
            storage = .empty
            return
        }
        if let record = LeafRecord.make(entries) {
            storage = .record(record)
        } else {
            storage = .children(ChildMap(sorted: entries))
        }
        if let priority { storage = .prioritized(PrioritizedNode(content: Node(storage: storage), priority: priority)) }
    }

    // MARK: - Inspection

    /// Whether this is the empty node (`null`).
    public var isEmpty: Bool {
        if case .empty = storage { return true }
        return false
    }

    /// Whether this is a leaf (boolean, number or string).
    public var isLeaf: Bool { leafValue != nil }

    /// The leaf value, or `nil` for empty and object nodes.
    public var leafValue: LeafValue? {
        switch storage {
        case .bool(let flag): return .bool(flag)
        case .number(let number): return .number(number)
        case .string(let text): return .string(text)
        case .prioritized(let box): return box.content.leafValue
        case .empty, .children, .record: return nil
        }
    }

    /// The node's priority, `nil` when it has none.
    public var priority: Priority? {
        if case .prioritized(let box) = storage { return box.priority }
        return nil
    }

    /// The node without its priority.
    public var withoutPriority: Node {
        if case .prioritized(let box) = storage { return box.content }
        return self
    }

    /// The children map of an object node, looking through a priority box; packed records are unpacked (an
    /// allocation), so hot paths handle ``Storage/record(_:)`` themselves.
    var childMap: ChildMap? {
        switch storage {
        case .children(let map): return map
        case .record(let record): return ChildMap(sorted: record.entries())
        case .prioritized(let box): return box.content.childMap
        case .empty, .bool, .number, .string: return nil
        }
    }

    /// Number of direct children (0 for leaves and empty).
    public var childCount: Int {
        switch storage {
        case .children(let map): return map.count
        case .record(let record): return record.count
        case .prioritized(let box): return box.content.childCount
        case .empty, .bool, .number, .string: return 0
        }
    }

    /// Whether the node is an object (has at least one child).
    public var hasChildren: Bool { childCount > 0 }

    /// The child at `key`; ``empty`` when absent or when this node is a leaf.
    public func child(_ key: Key) -> Node {
        switch storage {
        case .children(let map): return map.child(key)
        case .record(let record): return record.child(key) ?? .empty
        case .prioritized(let box): return box.content.child(key)
        case .empty, .bool, .number, .string: return .empty
        }
    }

    /// Whether there is a child at `key`: the same as `!child(key).isEmpty`, without building the child (a packed
    /// record's values are decoded on access).
    public func hasChild(_ key: Key) -> Bool {
        switch storage {
        case .children(let map): return map.hasChild(key)
        case .record(let record): return record.hasChild(key)
        case .prioritized(let box): return box.content.hasChild(key)
        case .empty, .bool, .number, .string: return false
        }
    }

    /// The descendant at `path` relative to this node; ``empty`` when any segment is missing.
    public func descendant(at path: Path) -> Node {
        var node = self
        for key in path.keys {
            node = node.child(key)
            if node.isEmpty { return node }
        }
        return node
    }

    /// The children in key order.
    public var children: ChildIterator { children(fromRank: 0) }

    /// The children in key order, starting with the `rank`-th (0-based).
    public func children(fromRank rank: Int) -> ChildIterator {
        switch storage {
        case .children(let map): return ChildIterator(map: map, fromRank: rank)
        case .record(let record): return ChildIterator(record: record, fromRank: rank)
        case .prioritized(let box): return box.content.children(fromRank: rank)
        case .empty, .bool, .number, .string: return ChildIterator()
        }
    }

    /// The first child in key order.
    public var firstChild: ChildEntry? { childMap?.first }

    /// The last child in key order.
    public var lastChild: ChildEntry? { childMap?.last }

    /// Number of children whose key sorts before `key` (O(log n)), and whether `key` is a child.
    public func rank(ofChild key: Key) -> (rank: Int, found: Bool) {
        childMap?.rank(of: key) ?? (0, false)
    }

    /// The child at position `rank` in key order; `rank` must be in `0..<childCount`.
    public func child(atRank rank: Int) -> ChildEntry {
        guard let map = childMap else { preconditionFailure("child(atRank:) on a node without children") }
        return map.entry(atRank: rank)
    }
}

/// The box that attaches a priority to a non-empty node; copy-on-write (mutated only while uniquely referenced).
final class PrioritizedNode: @unchecked Sendable {
    /// The node without priority; never empty, never itself prioritized.
    var content: Node
    /// The priority.
    var priority: Priority

    init(content: Node, priority: Priority) {
        self.content = content
        self.priority = priority
    }
}
