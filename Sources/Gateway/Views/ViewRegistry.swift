import DataModel
import Store
import Synchronization

/// The live views of one namespace, found by location through a path trie.
///
/// A write is routed only to views whose location is an ancestor, a descendant or equal to a written location:
/// the trie walk visits the written path's ancestors and the subtree below it, never unrelated views. Views are
/// reference counted by their listens; the last release removes the view. The trie is guarded by one mutex, held
/// only for lookups and membership changes (shard queues look up concurrently).
final class ViewRegistry: Sendable {
    private let trie = Mutex(TrieNode())

    /// The view for `key`, created with `make` when there is none; `created` tells the caller to load it.
    /// Each call counts one reference, to be given back with ``release(_:)``.
    func acquire(_ key: ViewKey, make: () -> View) -> (view: View, created: Bool) {
        trie.withLock { root in
            root.withNode(at: key.path.keys[...]) { node in
                if let view = node.views.first(where: { $0.key.queryIdentifier == key.queryIdentifier }) {
                    view.references += 1
                    return (view, false)
                }
                let view = make()
                view.references = 1
                node.views.append(view)
                return (view, true)
            }
        }
    }

    /// Gives back one reference; the view is removed when none is left. Returns whether it was removed.
    @discardableResult
    func release(_ view: View) -> Bool {
        trie.withLock { root in
            view.references -= 1
            guard view.references == 0 else { return false }
            root.remove(view.key.queryIdentifier, at: view.key.path.keys[...])
            return true
        }
    }

    /// The views that a write changing `changes` may affect, each once.
    func views(affectedBy changes: [Change]) -> [View] {
        trie.withLock { root in
            var found: [View] = []
            if changes.count == 1 {
                root.collect(along: changes[0].path.keys[...], into: &found)
                return found
            }
            var seen = Set<ObjectIdentifier>()
            var batch: [View] = []
            for change in changes {
                batch.removeAll(keepingCapacity: true)
                root.collect(along: change.path.keys[...], into: &batch)
                for view in batch where seen.insert(ObjectIdentifier(view)).inserted { found.append(view) }
            }
            return found
        }
    }

    /// Number of live views (for metrics).
    var count: Int {
        trie.withLock { $0.viewCount() }
    }
}

/// One level of the trie: the views at this location and the levels below.
private struct TrieNode {
    /// The views at this location, one per query; a short list (a location has one or a few queries, nearly always
    /// one), cheaper per location than a dictionary or an array.
    var views = SmallList<View>()
    var children: [Key: TrieNode] = [:]

    /// Runs `body` on the node at `keys`, creating missing levels (in place, no copies).
    mutating func withNode<R>(at keys: ArraySlice<Key>, _ body: (inout TrieNode) -> R) -> R {
        guard let first = keys.first else { return body(&self) }
        return children[first, default: TrieNode()].withNode(at: keys.dropFirst(), body)
    }

    /// Removes the view named `identifier` at `keys` and prunes levels left empty.
    mutating func remove(_ identifier: String, at keys: ArraySlice<Key>) {
        guard let first = keys.first else {
            views.removeAll { $0.key.queryIdentifier == identifier }
            return
        }
        guard children[first] != nil else { return }
        children[first, default: TrieNode()].remove(identifier, at: keys.dropFirst())
        if let child = children[first], child.views.isEmpty, child.children.isEmpty { children[first] = nil }
    }

    /// Appends the views at every ancestor of `keys`, at `keys` itself and in the subtree below.
    func collect(along keys: ArraySlice<Key>, into found: inout [View]) {
        found.append(contentsOf: views)
        guard let first = keys.first else {
            for child in children.values { child.collectSubtree(into: &found) }
            return
        }
        children[first]?.collect(along: keys.dropFirst(), into: &found)
    }

    private func collectSubtree(into found: inout [View]) {
        found.append(contentsOf: views)
        for child in children.values { child.collectSubtree(into: &found) }
    }

    func viewCount() -> Int {
        children.values.reduce(views.count) { $0 + $1.viewCount() }
    }
}
