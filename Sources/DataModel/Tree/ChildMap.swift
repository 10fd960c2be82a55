/// The children of a node in key order, sized for both tiny objects and million-child lists.
///
/// Up to ``flatLimit`` children live in one sorted contiguous array (one allocation, binary search, O(n) insert
/// with n ≤ 64 — cheaper than any tree at that size). Past it the children move into a ``SortedTree`` (O(log n)
/// everything); below ``flatLimit``/2 they move back (the gap avoids flapping). Both are copy-on-write.
struct ChildMap: Sendable {
    /// Largest child count kept in the flat array.
    static var flatLimit: Int { 64 }

    enum Representation: Sendable {
        case flat(ContiguousArray<ChildEntry>)
        case tree(SortedTree<ChildEntry>)
    }

    var representation: Representation

    /// A map over entries sorted by strictly increasing key with non-empty nodes.
    init(sorted entries: ContiguousArray<ChildEntry>) {
        representation = entries.count > Self.flatLimit ? .tree(SortedTree(sorted: entries)) : .flat(entries)
    }

    var count: Int {
        switch representation {
        case .flat(let entries): return entries.count
        case .tree(let tree): return tree.count
        }
    }

    /// The child with `key`; ``Node/empty`` when absent.
    func child(_ key: Key) -> Node {
        switch representation {
        case .flat(let entries):
            return key.withProbe { probe in
                entries.withUnsafeBufferPointer { entries in
                    Self.search(entries, probe).found.map { entries[$0].node } ?? .empty
                }
            }
        case .tree(let tree):
            return tree.element(for: key) { $0.node } ?? .empty
        }
    }

    /// Whether there is a child with `key`.
    func hasChild(_ key: Key) -> Bool {
        switch representation {
        case .flat(let entries):
            return Self.search(entries, key).found
        case .tree(let tree):
            return tree.element(for: key) { _ in true } ?? false
        }
    }

    /// Binary search in a flat array: insertion index and whether `key` is there.
    ///
    /// The key is prepared once and the entries compared in place, so a step costs no retain or release.
    static func search(_ entries: ContiguousArray<ChildEntry>, _ key: Key) -> (index: Int, found: Bool) {
        key.withProbe { probe in
            entries.withUnsafeBufferPointer { entries in
                let (index, found) = search(entries, probe)
                return (found ?? index, found != nil)
            }
        }
    }

    /// Binary search for a probed key: the index where it is (`found`), else the insertion index (`index`).
    @inline(__always)
    static func search(_ entries: UnsafeBufferPointer<ChildEntry>, _ probe: KeyProbe) -> (index: Int, found: Int?) {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            let order = probe.order(of: entries[middle].key)
            if order == 0 { return (middle, middle) }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return (low, nil)
    }

    /// Gives `body` in-place access to the child at `key` (``Node/empty`` when absent); afterwards an empty result
    /// removes the child and a non-empty one is stored.
    mutating func modifyChild<R>(_ key: Key, _ body: (inout Node) -> R) -> R {
        switch representation {
        case .flat(var entries):
            representation = .flat([])  // drop our reference so `entries` is uniquely owned
            let (index, found) = Self.search(entries, key)
            let result: R
            if found {
                result = body(&entries[index].node)
                if entries[index].node.isEmpty { entries.remove(at: index) }
            } else {
                var node = Node.empty
                result = body(&node)
                if !node.isEmpty { entries.insert(ChildEntry(key: key, node: node), at: index) }
            }
            representation = entries.count > Self.flatLimit ? .tree(SortedTree(sorted: entries)) : .flat(entries)
            return result
        case .tree(var tree):
            representation = .flat([])  // so `tree` holds the only reference to its root
            var becameEmpty = false
            let modified = tree.modify(key) { entry -> R in
                let result = body(&entry.node)
                becameEmpty = entry.node.isEmpty
                return result
            }
            let result: R
            if let modified {
                result = modified
                if becameEmpty { tree.remove(key) }
            } else {
                var node = Node.empty
                result = body(&node)
                if !node.isEmpty { tree.upsert(ChildEntry(key: key, node: node)) }
            }
            representation = tree.count < Self.flatLimit / 2 ? .flat(ContiguousArray(tree)) : .tree(tree)
            return result
        }
    }

    /// The first child in key order.
    var first: ChildEntry? {
        switch representation {
        case .flat(let entries): return entries.first
        case .tree(let tree): return tree.isEmpty ? nil : tree.element(atRank: 0)
        }
    }

    /// The last child in key order.
    var last: ChildEntry? {
        switch representation {
        case .flat(let entries): return entries.last
        case .tree(let tree): return tree.isEmpty ? nil : tree.element(atRank: tree.count - 1)
        }
    }

    /// Number of children whose key sorts before `key`, and whether `key` is a child.
    func rank(of key: Key) -> (rank: Int, found: Bool) {
        switch representation {
        case .flat(let entries):
            let (index, found) = Self.search(entries, key)
            return (index, found)
        case .tree(let tree): return tree.rank(of: key)
        }
    }

    /// The child at position `rank` in key order.
    func entry(atRank rank: Int) -> ChildEntry {
        switch representation {
        case .flat(let entries): return entries[rank]
        case .tree(let tree): return tree.element(atRank: rank)
        }
    }

    /// Whether both maps share storage (then they are certainly equal).
    func isIdentical(to other: ChildMap) -> Bool {
        switch (representation, other.representation) {
        case (.flat(let a), .flat(let b)):
            return a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in x.baseAddress == y.baseAddress } }
        case (.tree(let a), .tree(let b)):
            return a.root === b.root
        default:
            return false
        }
    }
}

extension ChildMap: Sequence {
    /// Iterates the children in key order.
    func makeIterator() -> ChildIterator { ChildIterator(map: self, fromRank: 0) }
}

/// Iterates a node's children in key order.
public struct ChildIterator: IteratorProtocol, Sequence {
    private var flat: ContiguousArray<ChildEntry> = []
    private var index = 0
    private var tree: SortedTreeIterator<ChildEntry>?

    /// Iterates a packed record (unpacked once).
    init(record: LeafRecord, fromRank rank: Int) {
        flat = record.entries()
        index = Swift.min(Swift.max(rank, 0), flat.count)
    }

    init(map: ChildMap, fromRank rank: Int) {
        switch map.representation {
        case .flat(let entries):
            flat = entries
            index = Swift.min(Swift.max(rank, 0), entries.count)
        case .tree(let sorted):
            tree = sorted.elements(fromRank: rank)
        }
    }

    /// An iterator over no children.
    init() {}

    /// The next child, or `nil` after the last.
    public mutating func next() -> ChildEntry? {
        if tree != nil { return tree?.next() }
        guard index < flat.count else { return nil }
        index += 1
        return flat[index - 1]
    }
}
