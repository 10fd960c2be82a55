import DataModel
import Store
import Transport
import Wire

/// The mutable part of a ``View``, guarded by the view's mutex.
struct ViewState {
    /// Whether the initial value is in; until then records are dropped (the value taken later holds them).
    var isLoaded = false
    /// The node at the view's location.
    var node = Node.empty
    /// For a filtering query: the location's index and the selected window, kept incrementally (a reference, so a
    /// default view carries 8 bytes for it, not the whole state).
    var window: WindowState?
    /// Increases by one per published change; subscribers use it to skip pushes already covered by a full copy.
    var sequence: UInt64 = 0
    /// Subscribers grouped by their connection's event loop (a handful of groups, one per loop). Listens that poll
    /// the latest data (``Subscription/pollsLatest``) are not among them.
    private(set) var groups = SmallList<SubscriberGroup>()
    /// The distinct delivery formats among subscribers with their counts: a short list (a view's listens use one
    /// or a few formats, nearly always one), cheaper per view than a dictionary or an array.
    private var formatCounts = SmallList<(format: DeliveryFormat, count: Int)>()

    var subscriberCount: Int { formatCounts.reduce(0) { $0 + $1.count } }

    /// Listens that poll the latest data (``Subscription/pollsLatest``). While only they listen, the view keeps
    /// no data between polls: a change unloads it, and the next poll loads it from the store again.
    private(set) var pollers = 0

    /// Whether the view only counts changes (its data is taken again when polled).
    var onlyPolled: Bool { pollers > 0 && formatCounts.isEmpty }

    /// Drops the data after a change while only polled: ``sequence`` still moves on.
    mutating func unload() {
        isLoaded = false
        node = .empty
        window = nil
        sequence += 1
    }

    /// The formats to encode pushes in.
    var formats: [DeliveryFormat] { formatCounts.map(\.format) }

    mutating func start(with value: Node, query: QueryParams) {
        node = value
        if !query.loadsAllData { window = WindowState(query: query, node: value) }
        isLoaded = true
    }

    /// The data a listen on this view holds: the node, or the query's selection.
    var result: Node {
        guard let window else { return node }
        return window.window.result(from: node, index: window.index)
    }

    // MARK: - Membership

    mutating func add(_ subscription: Subscription) {
        guard !subscription.pollsLatest else {
            pollers += 1
            return
        }
        let position: Int
        if let existing = groups.firstIndex(where: { $0.loop === subscription.loop }) {
            position = existing
        } else {
            groups.append(SubscriberGroup(loop: subscription.loop))
            position = groups.endIndex - 1
        }
        subscription.slot = groups[position].subscriptions.count
        groups[position].subscriptions.append(subscription)
        if let index = formatCounts.firstIndex(where: { $0.format == subscription.format }) {
            formatCounts[index].count += 1
        } else {
            formatCounts.append((subscription.format, 1))
        }
    }

    /// Removes a subscriber.
    mutating func remove(_ subscription: Subscription) {
        if subscription.pollsLatest {
            pollers -= 1
            return
        }
        guard let position = groups.firstIndex(where: { $0.loop === subscription.loop }) else { return }
        let slot = subscription.slot
        guard slot < groups[position].subscriptions.count, groups[position].subscriptions[slot] === subscription else {
            return
        }
        let last = groups[position].subscriptions.removeLast()
        if last !== subscription {
            groups[position].subscriptions[slot] = last
            last.slot = slot
        }
        if let index = formatCounts.firstIndex(where: { $0.format == subscription.format }) {
            formatCounts[index].count -= 1
            if formatCounts[index].count == 0 { formatCounts.remove(at: index) }
        }
    }

    // MARK: - Changes

    /// Applies the changes of one write that touch the view's location and returns the push for it, `nil` when
    /// the view's data did not change.
    ///
    /// Default views get the data at the written location (`d`), an update at or below the location as a merge at
    /// the update's path (`m`, also when it changed one location), several locations of any other write as a merge
    /// at their common ancestor, or the whole view when a write replaced the location or one of its ancestors.
    /// Query views get a merge at the location listing the children that entered or changed, with `null` for those
    /// that left (wire-protocol.md §11).
    mutating func apply(_ changes: [Change], updateBase: Path? = nil, at path: Path) -> PushContent? {
        var relevant: [Change] = []
        var replacedLocation = false
        var changedKeys: [Key] = []
        let old = node
        for change in changes {
            if let relative = path.relativePath(to: change.path) {
                relevant.append(change)
                node.set(change.newValue, at: relative)
                if let key = relative.firstKey {
                    if !changedKeys.contains(key) { changedKeys.append(key) }
                } else {
                    replacedLocation = true
                }
            } else if let relative = change.path.relativePath(to: path) {
                relevant.append(change)
                node = change.newValue.descendant(at: relative)
                replacedLocation = true
            }
        }
        guard !relevant.isEmpty, node != old else { return nil }
        if window != nil { return applyToWindow(old: old, changedKeys: replacedLocation ? nil : changedKeys, at: path) }
        if replacedLocation { return .data(path: path, node: node) }
        if let updateBase, path.contains(updateBase) {
            return .merge(path: updateBase, changes: relevant.map { change in
                MergeChange(target: .node(updateBase.relativePath(to: change.path) ?? .root), node: change.newValue)
            })
        }
        if relevant.count == 1 { return .data(path: relevant[0].path, node: relevant[0].newValue) }
        let base = Self.commonAncestor(of: relevant)
        if let covering = relevant.first(where: { $0.path == base }) {
            return .data(path: covering.path, node: node.descendant(at: path.relativePath(to: base) ?? .root))
        }
        return .merge(path: base, changes: relevant.map { change in
            MergeChange(target: .node(base.relativePath(to: change.path) ?? .root), node: change.newValue)
        })
    }

    private mutating func applyToWindow(old: Node, changedKeys: [Key]?, at path: Path) -> PushContent? {
        guard let state = window else { return nil }
        let childChanges: [ChildChange]
        if let changedKeys {
            childChanges = changedKeys.compactMap { key in
                let before = old.child(key)
                let after = node.child(key)
                return before == after ? nil : ChildChange(key: key, old: before, new: after)
            }
        } else {
            childChanges = Node.childChanges(from: old, to: node)
        }
        for change in childChanges { state.index.update(key: change.key, from: change.old, to: change.new) }
        let index = state.index
        let events = state.window.apply(childChanges, index: index, node: node)
        var entries: [MergeChange] = []
        var listed = Set<Key>()
        for event in events {
            guard let key = event.key, listed.insert(key).inserted else { continue }
            if case .childRemoved = event {
                entries.append(MergeChange(target: .node(Path(keys: [key])), node: .empty))
            } else {
                entries.append(MergeChange(target: .node(Path(keys: [key])), node: node.child(key)))
            }
        }
        return entries.isEmpty ? nil : .merge(path: path, changes: entries)
    }

    private static func commonAncestor(of changes: [Change]) -> Path {
        var keys = changes[0].path.keys
        for change in changes.dropFirst() {
            let shared = zip(keys, change.path.keys).prefix { $0 == $1 }.count
            keys.removeSubrange(shared...)
        }
        return Path(keys: keys)
    }
}

/// The subscribers of one view on one event loop.
struct SubscriberGroup {
    let loop: EventLoop
    var subscriptions = SmallList<Subscription>()
}

/// A query view's index over the location's children and its selected window (owned by the view's state).
final class WindowState {
    var index: ChildIndex
    var window: QueryWindow

    init(query: QueryParams, node: Node) {
        index = ChildIndex(index: query.index, over: node)
        window = QueryWindow(query: query, index: index)
    }
}

/// What one change means for a view's listens.
enum PushContent: Sendable {
    /// Overwrite the data at `path` (`a: "d"`).
    case data(path: Path, node: Node)
    /// Overwrite each relative location under `path` (`a: "m"`).
    case merge(path: Path, changes: [MergeChange])
}
