import DataModel
import Dispatch

extension Store {
    /// Reads the node at `path`.
    ///
    /// A path at or below the shard depth is read on its shard's queue; a wide path (e.g. the root) is assembled
    /// from every shard at one consistent cut. `completion` runs on a store queue and sees every write whose
    /// completion ran before this call.
    public func read(_ path: Path, completion: @escaping @Sendable (Node) -> Void) {
        withConsistentValue(at: path, onShard: nil, completion: completion)
    }

    /// Reads the result of `query` at `path`: the selected children as an object, without the location's own
    /// priority (data-model.md §8.3), or the node itself when the query selects everything.
    ///
    /// The value is taken like ``read(_:completion:)``; a filtering query is then evaluated on a global queue
    /// (O(n log n) in the location's children, data-model.md §8.3), so a large location never stalls its shard.
    /// Live listens should keep an index instead (``QueryWindow``).
    public func read(_ path: Path, query: QueryParams, completion: @escaping @Sendable (Node) -> Void) {
        guard !query.loadsAllData else {
            read(path, completion: completion)
            return
        }
        read(path) { node in
            DispatchQueue.global().async { completion(query.result(from: node)) }
        }
    }

    /// Reads the node at `path` while registering interest in it atomically with the change stream.
    ///
    /// `onShard` runs on the queue of every shard holding data at or below `path` (one shard for a path at or
    /// below the shard depth, all of them for a wide path), each at the point of that shard's change stream where
    /// the value is taken; `completion` then gets the value. Every change record a shard reports after its
    /// `onShard` call is newer than the value, and every one before is already in it, so a subscriber that
    /// registers in `onShard` and applies later records to the value misses and repeats nothing. For a single
    /// shard, `completion` runs right after `onShard` in the same task; for a wide path, on the queue of the shard
    /// that finished last (records of shards that finished earlier may already be arriving).
    public func withConsistentValue(at path: Path, onShard: (@Sendable (Int) -> Void)?,
                                    completion: @escaping @Sendable (Node) -> Void)
    {
        if let owner = layout.shard(for: path) {
            let shard = shards[owner]
            shard.submit {
                onShard?(owner)
                completion(shard.state.root.descendant(at: path))
            }
            return
        }
        let layout = self.layout
        var perShard: (@Sendable (Shard) -> Void)?
        if let onShard { perShard = { shard in onShard(shard.index) } }
        coordinate(Array(0..<layout.count), holding: false, perShard: perShard) { _, states in
            completion(TreeView(layout: layout, states: states).value(at: path))
        }
    }

    /// Which shard owns `path`, or `nil` for a wide path (one that spans every shard).
    public func shard(for path: Path) -> Int? {
        layout.shard(for: path)
    }
}
