/// An element stored in a ``SortedTree``: it carries its own sort key.
protocol SortedTreeElement {
    /// What the tree orders by.
    associatedtype SortKey
    /// This element's sort key; unique within one tree.
    var sortKey: SortKey { get }
    /// Three-way comparison of sort keys: negative when `a` sorts first, zero when equal.
    static func compare(_ a: SortKey, _ b: SortKey) -> Int
    /// A sort key prepared once for the many comparisons of one search (for keys: their bytes and integer value).
    associatedtype Probe
    /// Calls `body` with `key` prepared for searching.
    static func withProbe<R>(_ key: SortKey, _ body: (Probe) throws -> R) rethrows -> R
    /// Three-way comparison of a stored element's sort key with a probe: negative when the element sorts first.
    static func order(_ element: borrowing Self, _ probe: Probe) -> Int
    /// The same for a stored sort key (an internal node's lower bound).
    static func order(key: borrowing SortKey, _ probe: Probe) -> Int
}

/// A persistent (copy-on-write) B+-tree of unique elements in sort-key order with subtree counts.
///
/// Used for the children of large nodes (ordered by key) and for query indexes (ordered by sort value, then key).
/// Lookup, insert, remove, rank and select cost O(log n); iteration from any rank costs O(1) per element.
///
/// Nodes are classes shared between tree values: a mutation copies only the nodes on its root-to-leaf path that
/// are shared (`isKnownUniquelyReferenced`), so a snapshot of a tree costs one retain, and the owner keeps mutating
/// in place when no snapshot exists. Elements live only in leaves (at most ``leafCapacity``); internal nodes hold up
/// to ``branchCapacity`` children with a lower bound and an element count per child, so rank sums a contiguous
/// array instead of visiting children. Rejected alternative: a balanced binary tree (one allocation per element,
/// about 3× the memory and a cache miss per level).
struct SortedTree<Element: SortedTreeElement> {
    /// Most elements per leaf; a leaf that grows past it splits in two.
    static var leafCapacity: Int { 64 }
    /// Most children per internal node.
    static var branchCapacity: Int { 64 }

    /// The root; an empty tree is one empty leaf.
    var root: SortedTreeNode<Element>

    /// An empty tree.
    init() {
        root = SortedTreeNode(elements: [])
    }

    /// Builds a tree from elements already sorted by strictly increasing sort key, in O(n).
    init(sorted elements: some Collection<Element>) {
        var level: [SortedTreeNode<Element>] = []
        var remaining = elements[...]
        let leafCount = Swift.max(1, (elements.count + Self.leafCapacity - 1) / Self.leafCapacity)
        for index in 0..<leafCount {
            let size = remaining.count / (leafCount - index)
            level.append(SortedTreeNode(elements: ContiguousArray(remaining.prefix(size))))
            remaining = remaining.dropFirst(size)
        }
        while level.count > 1 {
            var parents: [SortedTreeNode<Element>] = []
            var rest = level[...]
            let parentCount = (level.count + Self.branchCapacity - 1) / Self.branchCapacity
            for index in 0..<parentCount {
                let size = rest.count / (parentCount - index)
                parents.append(SortedTreeNode(children: ContiguousArray(rest.prefix(size))))
                rest = rest.dropFirst(size)
            }
            level = parents
        }
        root = level[0]
    }

    /// Number of elements.
    var count: Int { root.count }

    /// Whether the tree holds no element.
    var isEmpty: Bool { root.count == 0 }

    /// `project` applied in place to the element with `key`, or `nil` when there is none (no copy of the element).
    func element<R>(for key: Element.SortKey, _ project: (borrowing Element) -> R) -> R? {
        Element.withProbe(key) { root.element(for: $0, project) }
    }

    /// Number of elements whose sort key is smaller than `key`, and whether `key` itself is present.
    func rank(of key: Element.SortKey) -> (rank: Int, found: Bool) {
        Element.withProbe(key) { probe in
            var node = root
            var rank = 0
            while !node.isLeaf {
                let index = node.childIndex(for: probe)
                for countIndex in 0..<index { rank += node.childCounts[countIndex] }
                node = node.children[index]
            }
            let (index, found) = node.elementIndex(for: probe)
            return (rank + index, found)
        }
    }

    /// Number of leading elements for which `isBefore` holds, for a predicate that is true for a prefix of the
    /// sort order and false after it (a partition point), in O(log n).
    func partitionRank(where isBefore: (Element.SortKey) -> Bool) -> Int {
        var node = root
        var rank = 0
        while !node.isLeaf {
            // Every key in children[i] is ≥ lowerBounds[i]: if a bound is not before, neither is its child.
            var low = 1
            var high = node.children.count
            while low < high {
                let middle = (low + high) / 2
                if isBefore(node.lowerBounds[middle]) { low = middle + 1 } else { high = middle }
            }
            let index = low - 1
            for countIndex in 0..<index { rank += node.childCounts[countIndex] }
            node = node.children[index]
        }
        var low = 0
        var high = node.elements.count
        while low < high {
            let middle = (low + high) / 2
            if isBefore(node.elements[middle].sortKey) { low = middle + 1 } else { high = middle }
        }
        return rank + low
    }

    /// The element at position `rank` (0-based) in sort order; `rank` must be in `0..<count`.
    func element(atRank rank: Int) -> Element {
        precondition(rank >= 0 && rank < count, "rank out of range")
        var node = root
        var remaining = rank
        while !node.isLeaf {
            var index = 0
            while remaining >= node.childCounts[index] {
                remaining -= node.childCounts[index]
                index += 1
            }
            node = node.children[index]
        }
        return node.elements[remaining]
    }

    /// Inserts `element`, replacing and returning an element with the same sort key.
    @discardableResult
    mutating func upsert(_ element: Element) -> Element? {
        if !isKnownUniquelyReferenced(&root) { root = root.copy() }
        let (replaced, split) = root.upsert(element)
        if let split {
            root = SortedTreeNode(children: [root, split])
        }
        return replaced
    }

    /// Gives `body` in-place access to the element with `key` in one descent (copying shared nodes on the way);
    /// returns `nil` without calling `body` when there is none. `body` must not change the element's sort key.
    mutating func modify<R>(_ key: Element.SortKey, _ body: (inout Element) -> R) -> R? {
        if !isKnownUniquelyReferenced(&root) { root = root.copy() }
        return root.modify(key, body)
    }

    /// Removes and returns the element with `key`, if any.
    @discardableResult
    mutating func remove(_ key: Element.SortKey) -> Element? {
        if !isKnownUniquelyReferenced(&root) { root = root.copy() }
        let removed = root.remove(key)
        if !root.isLeaf && root.children.count == 1 { root = root.children[0] }
        return removed
    }
}

extension SortedTree: Sequence {
    /// Iterates in sort order.
    func makeIterator() -> SortedTreeIterator<Element> {
        SortedTreeIterator(tree: self, fromRank: 0)
    }

    /// Iterates in sort order starting at position `rank` (clamped to `0...count`).
    func elements(fromRank rank: Int) -> SortedTreeIterator<Element> {
        SortedTreeIterator(tree: self, fromRank: rank)
    }
}

/// Forward iteration over a ``SortedTree`` with a root-to-leaf stack; O(1) amortized per element.
struct SortedTreeIterator<Element: SortedTreeElement>: IteratorProtocol, Sequence {
    private var stack: [(node: SortedTreeNode<Element>, index: Int)] = []

    init(tree: SortedTree<Element>, fromRank rank: Int) {
        var node = tree.root
        var remaining = Swift.max(0, Swift.min(rank, tree.count))
        while !node.isLeaf {
            var index = 0
            while index < node.children.count - 1 && remaining >= node.childCounts[index] {
                remaining -= node.childCounts[index]
                index += 1
            }
            stack.append((node, index))
            node = node.children[index]
        }
        stack.append((node, remaining))
    }

    mutating func next() -> Element? {
        while let top = stack.last {
            if top.node.isLeaf {
                if top.index < top.node.elements.count {
                    stack[stack.count - 1].index += 1
                    return top.node.elements[top.index]
                }
                stack.removeLast()
                advanceParent()
            } else {
                return nil
            }
        }
        return nil
    }

    /// After a subtree is exhausted, moves to the next child of the nearest ancestor that has one.
    private mutating func advanceParent() {
        while let top = stack.last {
            let nextIndex = top.index + 1
            if nextIndex < top.node.children.count {
                stack[stack.count - 1].index = nextIndex
                var node = top.node.children[nextIndex]
                while !node.isLeaf {
                    stack.append((node, 0))
                    node = node.children[0]
                }
                stack.append((node, 0))
                return
            }
            stack.removeLast()
        }
    }
}
