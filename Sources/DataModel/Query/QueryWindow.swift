/// A live query view at one location, kept exact incrementally (data-model.md §8.4).
///
/// Given the child changes of a write and the location's ``ChildIndex`` (already updated for them), ``apply(_:index:node:)``
/// returns the Firebase events for this view without re-running the query:
/// - without a limit, membership is just "inside the bounds", so only the changed children are examined:
///   O(c log n) for c changes;
/// - with a limit, the selected rank range is recomputed from the index in O(log n) and the new window (at most
///   `limit` positions) is compared with the stored one by a linear merge: O(log n + limit), independent of the
///   location's size. A child leaving a full window is always paired with the child that slides in.
///
/// The window stores positions only; values are read from the location's node. Owned by the location's owner.
public struct QueryWindow: Sendable {
    /// The query.
    public let query: QueryParams
    /// With a limit: the selected positions in index order. Without one: empty (membership is the bounds).
    private var window: [IndexEntry]

    /// Opens a view over the current state of the location.
    ///
    /// - Precondition: `index.index == query.index`.
    public init(query: QueryParams, index: ChildIndex) {
        precondition(index.index == query.index, "the index must order by the query's index")
        self.query = query
        window = []
        if query.limit != nil { window = Self.selection(query, index) }
    }

    private static func selection(_ query: QueryParams, _ index: ChildIndex) -> [IndexEntry] {
        let ranks = index.selectedRanks(for: query)
        return Array(index.entries(fromRank: ranks.lowerBound).prefix(ranks.count))
    }

    /// The selected children's keys in index order.
    public func selectedKeys(index: ChildIndex) -> [Key] {
        if query.limit != nil { return window.map(\.key) }
        return Self.selection(query, index).map(\.key)
    }

    /// The view's data: the selected children of `node` as an object without the location's priority (§8.3).
    public func result(from node: Node, index: ChildIndex) -> Node {
        var entries = ContiguousArray<ChildEntry>()
        for key in selectedKeys(index: index) {
            let child = node.child(key)
            if !child.isEmpty { entries.append(ChildEntry(key: key, node: child)) }
        }
        entries.sort { Key.compare($0.key, $1.key) < 0 }
        return Node(sortedChildren: entries, priority: nil)
    }

    /// Updates the view for one write and returns its events in SDK order.
    ///
    /// - Parameters:
    ///   - changes: the location's changed children (each key at most once).
    ///   - index: the location's index for ``query``'s ordering, already updated with `changes`.
    ///   - node: the location's value after the write.
    public mutating func apply(_ changes: [ChildChange], index: ChildIndex, node: Node) -> [ViewEvent] {
        guard !changes.isEmpty else { return [] }
        var diff = WindowDiff()
        if query.limit == nil {
            for change in changes { classifyUnlimited(change, into: &diff) }
            return diff.events(query: query) { position in predecessorInBounds(of: position, index: index) }
        }
        if isUnaffected(by: changes) { return [] }
        let newWindow = Self.selection(query, index)
        compare(old: window, new: newWindow, changes: changes, node: node, into: &diff)
        window = newWindow
        return diff.events(query: query) { position in
            let (rank, _) = Self.search(newWindow, position)
            return rank > 0 ? newWindow[rank - 1].key : nil
        }
    }

    /// Whether a full limited window keeps its members and values: every old and new position of the changed
    /// children lies outside the bounds, or on the side of the window that the limit cuts off (before the first
    /// member for `limitToLast`, after the last for `limitToFirst`). O(changes) instead of O(log n + limit).
    private func isUnaffected(by changes: [ChildChange]) -> Bool {
        guard let limit = query.limit, window.count == limit, let first = window.first, let last = window.last else {
            return false
        }
        func outside(_ node: Node, _ key: Key) -> Bool {
            if node.isEmpty { return true }
            let position = query.position(of: node, key: key)
            if !query.boundsContain(position) { return true }
            return query.anchor == .last ? position < first : last < position
        }
        return changes.allSatisfy { outside($0.old, $0.key) && outside($0.new, $0.key) }
    }

    private func classifyUnlimited(_ change: ChildChange, into diff: inout WindowDiff) {
        let oldPosition = change.old.isEmpty ? nil : query.position(of: change.old, key: change.key)
        let newPosition = change.new.isEmpty ? nil : query.position(of: change.new, key: change.key)
        let wasIn = oldPosition.map(query.boundsContain) ?? false
        let isIn = newPosition.map(query.boundsContain) ?? false
        switch (wasIn, isIn) {
        case (true, false):
            if let oldPosition { diff.removed.append((oldPosition, change.old)) }
        case (false, true):
            if let newPosition { diff.added.append((newPosition, change.new)) }
        case (true, true):
            if let newPosition, change.old != change.new {
                diff.changed.append((newPosition, change.new, query.index.indexedValueChanged(from: change.old, to: change.new)))
            }
        case (false, false):
            break
        }
    }

    /// The key before `position` in the view: its predecessor in the index if that one is inside the bounds.
    private func predecessorInBounds(of position: IndexEntry, index: ChildIndex) -> Key? {
        let (rank, _) = index.rank(of: position)
        guard rank > 0 else { return nil }
        let previous = index.entry(atRank: rank - 1)
        return query.boundsContain(previous) ? previous.key : nil
    }

    /// Diffs two windows. Unchanged children keep their positions, so after setting the changed keys aside both
    /// windows are sorted by the same positions and a linear merge finds the children that slid in or out.
    private func compare(
        old: [IndexEntry], new: [IndexEntry], changes: [ChildChange], node: Node, into diff: inout WindowDiff
    ) {
        let changedKeys = ChangedKeys(changes)
        var oldIndex = 0
        var newIndex = 0
        while oldIndex < old.count || newIndex < new.count {
            if oldIndex < old.count, changedKeys.contains(old[oldIndex].key) {
                oldIndex += 1
                continue
            }
            if newIndex < new.count, changedKeys.contains(new[newIndex].key) {
                newIndex += 1
                continue
            }
            let order: Int
            if oldIndex == old.count {
                order = 1
            } else if newIndex == new.count {
                order = -1
            } else {
                order = IndexEntry.compare(old[oldIndex], new[newIndex])
            }
            if order == 0 {
                oldIndex += 1
                newIndex += 1
            } else if order < 0 {
                diff.removed.append((old[oldIndex], node.child(old[oldIndex].key)))
                oldIndex += 1
            } else {
                diff.added.append((new[newIndex], node.child(new[newIndex].key)))
                newIndex += 1
            }
        }
        for change in changes {
            let oldPosition = old.first { $0.key == change.key }
            let newPosition = new.first { $0.key == change.key }
            switch (oldPosition, newPosition) {
            case (let before?, nil):
                diff.removed.append((before, change.old))
            case (nil, let after?):
                diff.added.append((after, change.new))
            case (_?, let after?):
                if change.old != change.new {
                    diff.changed.append((after, change.new, query.index.indexedValueChanged(from: change.old, to: change.new)))
                }
            case (nil, nil):
                break
            }
        }
    }

    /// Binary search of a position in a sorted window.
    static func search(_ window: [IndexEntry], _ position: IndexEntry) -> (index: Int, found: Bool) {
        var low = 0
        var high = window.count
        while low < high {
            let middle = (low + high) / 2
            let order = IndexEntry.compare(window[middle], position)
            if order == 0 { return (middle, true) }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return (low, false)
    }
}

/// The keys of a batch of changes, with a linear scan for the usual one or two and a set for large batches.
private struct ChangedKeys {
    private let keys: [Key]
    private let set: Set<Key>?

    init(_ changes: [ChildChange]) {
        keys = changes.map(\.key)
        set = keys.count > 8 ? Set(keys) : nil
    }

    func contains(_ key: Key) -> Bool {
        if let set { return set.contains(key) }
        return keys.contains(key)
    }
}

/// Raw changes of one view for one write, turned into ordered events.
struct WindowDiff {
    var removed: [(position: IndexEntry, node: Node)] = []
    var added: [(position: IndexEntry, node: Node)] = []
    var changed: [(position: IndexEntry, node: Node, moved: Bool)] = []

    /// Events in SDK order: removed, added, moved, changed (each in index order), then value.
    func events(query: QueryParams, previousKey: (IndexEntry) -> Key?) -> [ViewEvent] {
        guard !removed.isEmpty || !added.isEmpty || !changed.isEmpty else { return [] }
        var events: [ViewEvent] = []
        for item in removed.sorted(by: { $0.position < $1.position }) {
            events.append(.childRemoved(key: item.position.key, node: item.node))
        }
        for item in added.sorted(by: { $0.position < $1.position }) {
            events.append(.childAdded(key: item.position.key, node: item.node, previousKey: previousKey(item.position)))
        }
        let changedInOrder = changed.sorted { $0.position < $1.position }
        for item in changedInOrder where item.moved {
            events.append(.childMoved(key: item.position.key, node: item.node, previousKey: previousKey(item.position)))
        }
        for item in changedInOrder {
            events.append(.childChanged(key: item.position.key, node: item.node, previousKey: previousKey(item.position)))
        }
        events.append(.value)
        return events
    }
}
