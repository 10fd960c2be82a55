extension Node {
    // MARK: - Writes

    /// Replaces the node at `path` (relative to this node) with `node`; an empty `node` deletes.
    ///
    /// Missing intermediate objects are created; leaves on the way become objects (keeping their priority); objects
    /// left without children become empty, recursively upwards. Runs in place along the path while storage is
    /// uniquely referenced: O(depth × log(children)).
    public mutating func set(_ node: Node, at path: Path) {
        set(node, at: path.keys[...])
    }

    private mutating func set(_ node: Node, at keys: ArraySlice<Key>) {
        guard let first = keys.first else {
            self = node
            return
        }
        modifyChild(first) { $0.set(node, at: keys.dropFirst()) }
    }

    /// A copy of this node with `node` written at `path` (see ``set(_:at:)``).
    public func setting(_ node: Node, at path: Path) -> Node {
        var copy = self
        copy.set(node, at: path)
        return copy
    }

    /// Replaces the direct child `key` with `node` (an empty `node` removes it).
    public mutating func setChild(_ key: Key, to node: Node) {
        modifyChild(key) { $0 = node }
    }

    /// Sets or clears the priority; a no-op on the empty node, which never has a priority (§1).
    public mutating func setPriority(_ priority: Priority?) {
        switch storage {
        case .empty:
            return
        case .prioritized(var box):
            storage = .empty
            let unique = isKnownUniquelyReferenced(&box)
            guard let priority else {
                self = box.content
                if unique { box.content = .empty }
                return
            }
            if unique {
                box.priority = priority
                storage = .prioritized(box)
            } else {
                storage = .prioritized(PrioritizedNode(content: box.content, priority: priority))
            }
        case .bool, .number, .string, .children, .record:
            guard let priority else { return }
            let content = self
            storage = .prioritized(PrioritizedNode(content: content, priority: priority))
        }
    }

    /// A copy of this node with `priority` (see ``setPriority(_:)``).
    public func withPriority(_ priority: Priority?) -> Node {
        var copy = self
        copy.setPriority(priority)
        return copy
    }

    /// Gives `body` in-place access to the child `key` (``empty`` when absent) and stores the result.
    ///
    /// Below a leaf, a non-empty result turns the leaf into an object that keeps the leaf's priority; an empty
    /// result leaves the leaf unchanged. An object whose last child is removed becomes empty.
    public mutating func modifyChild<R>(_ key: Key, _ body: (inout Node) -> R) -> R {
        modifyContent { content in
            if case .record(let record) = content.storage {
                content.storage = .children(ChildMap(sorted: record.entries()))  // records are never written in place
            }
            switch content.storage {
            case .children(var map):
                content.storage = .empty  // so `map` is uniquely referenced
                let result = map.modifyChild(key, body)
                if map.count > 0 { content.storage = .children(map) }
                return result
            case .empty, .bool, .number, .string, .record, .prioritized:
                var child = Node.empty
                let result = body(&child)
                if !child.isEmpty {
                    content.storage = .children(ChildMap(sorted: [ChildEntry(key: key, node: child)]))
                }
                return result
            }
        }
    }

    /// Gives `body` in-place access to the node without its priority; the priority is kept unless the result is
    /// empty.
    mutating func modifyContent<R>(_ body: (inout Node) -> R) -> R {
        guard case .prioritized(var box) = storage else { return body(&self) }
        storage = .empty
        let unique = isKnownUniquelyReferenced(&box)
        var content = box.content
        if unique { box.content = .empty }
        let result = body(&content)
        if content.isEmpty { return result }
        if unique {
            box.content = content
            storage = .prioritized(box)
        } else {
            storage = .prioritized(PrioritizedNode(content: content, priority: box.priority))
        }
        return result
    }

    // MARK: - Measures

    /// Levels of objects below this node: 0 for leaves and empty, 1 + the deepest child for objects.
    public var depth: Int {
        switch storage {
        case .empty, .bool, .number, .string: return 0
        case .record(let record): return record.depth
        case .prioritized(let box): return box.content.depth
        case .children(let map):
            var deepest = 0
            for entry in map { deepest = max(deepest, entry.node.depth) }
            return deepest + 1
        }
    }
}

extension Node: Equatable {
    /// Deep equality of values and priorities, comparing strings and keys by code units.
    public static func == (lhs: Node, rhs: Node) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case (.empty, .empty):
            return true
        case (.bool(let x), .bool(let y)):
            return x == y
        case (.number(let x), .number(let y)):
            return x == y
        case (.string(let x), .string(let y)):
            return CodeUnitOrder.equal(x, y)
        case (.children(let x), .children(let y)):
            if x.isIdentical(to: y) { return true }
            guard x.count == y.count else { return false }
            return zip(x, y).allSatisfy { $0.key == $1.key && $0.node == $1.node }
        case (.record(let x), .record(let y)):
            return x.hasSameBytes(as: y)
        case (.record, .children), (.children, .record):
            guard lhs.childCount == rhs.childCount else { return false }
            return zip(lhs.children, rhs.children).allSatisfy { $0.key == $1.key && $0.node == $1.node }
        case (.prioritized(let x), .prioritized(let y)):
            return x === y || (x.priority == y.priority && x.content == y.content)
        default:
            return false
        }
    }
}
