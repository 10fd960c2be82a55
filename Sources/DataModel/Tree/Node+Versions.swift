extension Node {
    /// The child at `key` of this node and of `other`, which is another version of the same location — typically
    /// the data before and after a write, which share most of their storage.
    ///
    /// One search serves both where they agree: identical storage answers once; in two versions of a sorted map the
    /// position found in this one is checked first in the other (a changed or inserted child sits where this one's
    /// search ended), which costs one comparison instead of a search. The result is exactly
    /// `(child(key), other.child(key))`.
    public func child(_ key: Key, alongside other: Node) -> (Node, Node) {
        switch storage {
        case .children(let map):
            if case .children(let otherMap) = other.storage { return ChildMap.children(key, map, otherMap) }
        case .record(let record):
            if case .record(let otherRecord) = other.storage, record.buffer === otherRecord.buffer {
                let child = record.child(key) ?? .empty
                return (child, child)
            }
        case .prioritized(let box):
            if case .prioritized(let otherBox) = other.storage { return box.content.child(key, alongside: otherBox.content) }
        case .empty, .bool, .number, .string:
            return (.empty, other.child(key))
        }
        return (child(key), other.child(key))
    }
}

extension ChildMap {
    /// The child at `key` in two versions of a map (see ``Node/child(_:alongside:)``).
    static func children(_ key: Key, _ first: ChildMap, _ second: ChildMap) -> (Node, Node) {
        switch (first.representation, second.representation) {
        case (.flat(let x), .flat(let y)):
            return key.withProbe { probe in
                x.withUnsafeBufferPointer { x in
                    y.withUnsafeBufferPointer { y in
                        let (index, found) = search(x, probe)
                        let child = found.map { x[$0].node } ?? .empty
                        if x.baseAddress == y.baseAddress && x.count == y.count { return (child, child) }
                        if index < y.count && probe.order(of: y[index].key) == 0 { return (child, y[index].node) }
                        return (child, search(y, probe).found.map { y[$0].node } ?? .empty)
                    }
                }
            }
        case (.tree(let x), .tree(let y)):
            let (a, b) = key.withProbe { SortedTreeNode.elements(for: $0, x.root, y.root) { $0.node } }
            return (a ?? .empty, b ?? .empty)
        default:
            return (first.child(key), second.child(key))
        }
    }
}

extension SortedTreeNode {
    /// `project` applied to the element with a probed key in two versions of a subtree, or `nil` where there is
    /// none: the descent is shared while the versions share nodes, and the position found in the first leaf is
    /// checked first in the second.
    static func elements<R>(for probe: Element.Probe, _ first: SortedTreeNode, _ second: SortedTreeNode, _ project: (borrowing Element) -> R)
        -> (R?, R?)
    {
        var x = first
        var y = second
        while true {
            if x === y {
                let result = x.element(for: probe, project)
                return (result, result)
            }
            if x.isLeaf || y.isLeaf { break }
            x = x.children[x.childIndex(for: probe)]
            y = y.children[y.childIndex(for: probe)]
        }
        guard x.isLeaf && y.isLeaf else { return (x.element(for: probe, project), y.element(for: probe, project)) }
        return x.elements.withUnsafeBufferPointer { xs in
            y.elements.withUnsafeBufferPointer { ys in
                let (index, found) = search(xs, probe)
                let result = found ? project(xs[index]) : nil
                if index < ys.count && Element.order(ys[index], probe) == 0 { return (result, project(ys[index])) }
                let (otherIndex, otherFound) = search(ys, probe)
                return (result, otherFound ? project(ys[otherIndex]) : nil)
            }
        }
    }
}
