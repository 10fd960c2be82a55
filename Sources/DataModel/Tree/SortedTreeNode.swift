/// One node of a ``SortedTree``: a leaf holding elements, or an internal node holding children.
///
/// Copy-on-write box: a node is mutated only after its owner checked `isKnownUniquelyReferenced`, so a node
/// reachable from more than one tree value is never changed (hence `@unchecked Sendable`).
final class SortedTreeNode<Element: SortedTreeElement>: @unchecked Sendable {
    /// Leaf elements in sort order; empty for internal nodes.
    var elements: ContiguousArray<Element>
    /// Children in sort order; empty for leaves.
    var children: ContiguousArray<SortedTreeNode>
    /// `lowerBounds[i]` ≤ every key in `children[i]`, and every key in `children[i - 1]` < `lowerBounds[i]`.
    /// Entry 0 is kept valid too, because merges and redistributions move it into other nodes.
    var lowerBounds: ContiguousArray<Element.SortKey>
    /// Element count of each child, so rank sums one contiguous array.
    var childCounts: ContiguousArray<Int>
    /// Elements in this subtree.
    var count: Int
    /// Whether this is a leaf (a node never changes kind). A constant, so testing it needs no exclusivity check.
    let isLeaf: Bool

    /// A leaf.
    init(elements: ContiguousArray<Element>) {
        self.isLeaf = true
        self.elements = elements
        self.children = []
        self.lowerBounds = []
        self.childCounts = []
        self.count = elements.count
    }

    /// An internal node over non-empty children.
    init(children: ContiguousArray<SortedTreeNode>) {
        precondition(!children.isEmpty, "an internal node needs children")
        self.isLeaf = false
        self.elements = []
        self.children = children
        self.lowerBounds = ContiguousArray(children.map { $0.firstKey })
        self.childCounts = ContiguousArray(children.map(\.count))
        self.count = childCounts.reduce(0, +)
    }

    private init(copying other: SortedTreeNode) {
        isLeaf = other.isLeaf
        elements = other.elements
        children = other.children
        lowerBounds = other.lowerBounds
        childCounts = other.childCounts
        count = other.count
    }

    /// A shallow copy sharing children (their arrays are copied on write).
    func copy() -> SortedTreeNode { SortedTreeNode(copying: self) }

    /// Number of direct items (elements of a leaf, children of an internal node).
    var width: Int { isLeaf ? elements.count : children.count }

    /// The smallest key in this subtree (a lower bound for internal nodes); the node must not be empty.
    var firstKey: Element.SortKey {
        isLeaf ? elements[0].sortKey : lowerBounds[0]
    }

    /// Position of `key` among the leaf elements: the insertion index and whether it is already there.
    func elementIndex(for key: Element.SortKey) -> (index: Int, found: Bool) {
        Element.withProbe(key) { elementIndex(for: $0) }
    }

    /// Position of a probed key among the leaf elements: the insertion index and whether it is already there.
    ///
    /// Compares the elements in place (no copy, so no retain and release per step) under one access to `elements`.
    func elementIndex(for probe: Element.Probe) -> (index: Int, found: Bool) {
        elements.withUnsafeBufferPointer { Self.search($0, probe) }
    }

    /// Binary search of sorted elements for a probed key: the insertion index and whether it is already there.
    @inline(__always)
    static func search(_ elements: UnsafeBufferPointer<Element>, _ probe: Element.Probe) -> (index: Int, found: Bool) {
        var low = 0
        var high = elements.count
        while low < high {
            let middle = (low + high) / 2
            let order = Element.order(elements[middle], probe)
            if order == 0 { return (middle, true) }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return (low, false)
    }

    /// `project` applied in place to the element with a probed key in this subtree, or `nil` when there is none;
    /// one descent that reads each node's arrays once and copies only what `project` returns.
    func element<R>(for probe: Element.Probe, _ project: (borrowing Element) -> R) -> R? {
        var node = self
        while !node.isLeaf { node = node.children[node.childIndex(for: probe)] }
        return node.elements.withUnsafeBufferPointer { elements in
            let (index, found) = Self.search(elements, probe)
            return found ? project(elements[index]) : nil
        }
    }

    /// Index of the child whose range holds `key`: the last `i ≥ 1` with `lowerBounds[i] ≤ key`, else 0.
    func childIndex(for key: Element.SortKey) -> Int {
        Element.withProbe(key) { childIndex(for: $0) }
    }

    /// Index of the child whose range holds a probed key: the last `i ≥ 1` with `lowerBounds[i] ≤ key`, else 0.
    func childIndex(for probe: Element.Probe) -> Int {
        lowerBounds.withUnsafeBufferPointer { bounds in
            var low = 1
            var high = bounds.count
            while low < high {
                let middle = (low + high) / 2
                if Element.order(key: bounds[middle], probe) <= 0 { low = middle + 1 } else { high = middle }
            }
            return low - 1
        }
    }

    /// Makes `children[index]` safe to mutate, copying it when shared.
    private func uniqueChild(_ index: Int) -> SortedTreeNode {
        if !isKnownUniquelyReferenced(&children[index]) { children[index] = children[index].copy() }
        return children[index]
    }

    /// In-place access to the element with `key` (see ``SortedTree/modify(_:_:)``).
    func modify<R>(_ key: Element.SortKey, _ body: (inout Element) -> R) -> R? {
        if isLeaf {
            let (index, found) = elementIndex(for: key)
            return found ? body(&elements[index]) : nil
        }
        return uniqueChild(childIndex(for: key)).modify(key, body)
    }

    /// Inserts or replaces; returns the replaced element and a new right sibling when this node split.
    func upsert(_ element: Element) -> (replaced: Element?, split: SortedTreeNode?) {
        if isLeaf {
            let (index, found) = elementIndex(for: element.sortKey)
            if found {
                let old = elements[index]
                elements[index] = element
                return (old, nil)
            }
            elements.insert(element, at: index)
            count += 1
            guard elements.count > SortedTree<Element>.leafCapacity else { return (nil, nil) }
            let half = elements.count / 2
            let right = SortedTreeNode(elements: ContiguousArray(elements[half...]))
            elements.removeSubrange(half...)
            count = elements.count
            return (nil, right)
        }
        let index = childIndex(for: element.sortKey)
        let child = uniqueChild(index)
        let (replaced, split) = child.upsert(element)
        if replaced == nil {
            count += 1
            childCounts[index] += 1
        }
        guard let split else { return (replaced, nil) }
        childCounts[index] = child.count
        children.insert(split, at: index + 1)
        lowerBounds.insert(split.firstKey, at: index + 1)
        childCounts.insert(split.count, at: index + 1)
        guard children.count > SortedTree<Element>.branchCapacity else { return (replaced, nil) }
        let half = children.count / 2
        let right = SortedTreeNode(children: ContiguousArray(children[half...]))
        right.lowerBounds = ContiguousArray(lowerBounds[half...])
        children.removeSubrange(half...)
        lowerBounds.removeSubrange(half...)
        childCounts.removeSubrange(half...)
        count = childCounts.reduce(0, +)
        return (replaced, right)
    }

    /// Removes the element with `key`; children that fall below half capacity are merged or rebalanced.
    func remove(_ key: Element.SortKey) -> Element? {
        if isLeaf {
            let (index, found) = elementIndex(for: key)
            guard found else { return nil }
            count -= 1
            return elements.remove(at: index)
        }
        let index = childIndex(for: key)
        guard let (removed, underfull) = removeFromChild(index, key) else { return nil }
        count -= 1
        childCounts[index] -= 1
        if underfull && children.count > 1 {
            rebalance(around: index)
        }
        return removed
    }

    /// Removes `key` from `children[index]`; returns the element and whether the child fell below half capacity.
    /// (A separate function so that no reference to the child outlives it: rebalancing needs it unique.)
    private func removeFromChild(_ index: Int, _ key: Element.SortKey) -> (Element, Bool)? {
        let child = uniqueChild(index)
        guard let removed = child.remove(key) else { return nil }
        let minimum = (child.isLeaf ? SortedTree<Element>.leafCapacity : SortedTree<Element>.branchCapacity) / 2
        return (removed, child.width < minimum)
    }

    /// Merges the underfull child at `index` with a neighbour, or evens out their items when both would not fit.
    private func rebalance(around index: Int) {
        let leftIndex = index > 0 ? index - 1 : index
        let rightIndex = leftIndex + 1
        let left = uniqueChild(leftIndex)
        let right = uniqueChild(rightIndex)
        let capacity = left.isLeaf ? SortedTree<Element>.leafCapacity : SortedTree<Element>.branchCapacity
        if !left.isLeaf { right.lowerBounds[0] = lowerBounds[rightIndex] }
        if left.width + right.width <= capacity {
            left.absorb(right)
            children.remove(at: rightIndex)
            lowerBounds.remove(at: rightIndex)
            childCounts.remove(at: rightIndex)
            childCounts[leftIndex] = left.count
            return
        }
        let target = (left.width + right.width) / 2
        if left.width > target {
            right.prepend(left.takeSuffix(left.width - target))
        } else {
            left.append(right.takePrefix(target - left.width))
        }
        lowerBounds[rightIndex] = right.firstKey
        childCounts[leftIndex] = left.count
        childCounts[rightIndex] = right.count
    }

    /// Appends all items of `other` (a right neighbour of the same kind).
    private func absorb(_ other: SortedTreeNode) {
        append(other.takePrefix(other.width))
    }

    /// Items removed from one node to be added to a neighbour.
    private struct Items {
        var elements: ContiguousArray<Element> = []
        var children: ContiguousArray<SortedTreeNode> = []
        var lowerBounds: ContiguousArray<Element.SortKey> = []
        var childCounts: ContiguousArray<Int> = []
        var count = 0
    }

    private func takePrefix(_ width: Int) -> Items {
        var items = Items()
        if isLeaf {
            items.elements = ContiguousArray(elements[..<width])
            elements.removeSubrange(..<width)
            items.count = width
        } else {
            items.children = ContiguousArray(children[..<width])
            items.lowerBounds = ContiguousArray(lowerBounds[..<width])
            items.childCounts = ContiguousArray(childCounts[..<width])
            items.count = items.childCounts.reduce(0, +)
            children.removeSubrange(..<width)
            lowerBounds.removeSubrange(..<width)
            childCounts.removeSubrange(..<width)
        }
        count -= items.count
        return items
    }

    private func takeSuffix(_ width: Int) -> Items {
        var items = Items()
        let start = self.width - width
        if isLeaf {
            items.elements = ContiguousArray(elements[start...])
            elements.removeSubrange(start...)
            items.count = width
        } else {
            items.children = ContiguousArray(children[start...])
            items.lowerBounds = ContiguousArray(lowerBounds[start...])
            items.childCounts = ContiguousArray(childCounts[start...])
            items.count = items.childCounts.reduce(0, +)
            children.removeSubrange(start...)
            lowerBounds.removeSubrange(start...)
            childCounts.removeSubrange(start...)
        }
        count -= items.count
        return items
    }

    private func append(_ items: Items) {
        elements.append(contentsOf: items.elements)
        children.append(contentsOf: items.children)
        lowerBounds.append(contentsOf: items.lowerBounds)
        childCounts.append(contentsOf: items.childCounts)
        count += items.count
    }

    private func prepend(_ items: Items) {
        elements.insert(contentsOf: items.elements, at: 0)
        children.insert(contentsOf: items.children, at: 0)
        lowerBounds.insert(contentsOf: items.lowerBounds, at: 0)
        childCounts.insert(contentsOf: items.childCounts, at: 0)
        count += items.count
    }
}
