import DataModel
import Dispatch

extension Store {
    /// Applies `writes` in order, as if each were passed to ``write(_:completion:)`` one after the other from
    /// one thread, at the cost of one queue hop per shard instead of one per write.
    ///
    /// This is the path for the gateway: one read from a connection often carries many writes. The writes that
    /// lie in one shard are applied by one task on that shard's queue, one after the other, each reported to the
    /// observer as it is applied; with persistence their records reach the journal together and share a group
    /// commit. A multi-shard write in the batch keeps its atomicity and its place in the order: the writes before
    /// it are submitted first, those after it behind it.
    ///
    /// `completion` runs once per write, with the write's index in `writes`, on a store queue, with the same
    /// result and under the same conditions as ``write(_:completion:)`` (with persistence: once the record is
    /// durable). Writes on one shard complete in batch order; writes on different shards complete concurrently
    /// on their shards' queues, in any order relative to each other.
    public func write(batch writes: [StoreWrite], authorizer: WriteAuthorizer? = nil,
                      completion: @escaping @Sendable (Int, Result<WriteOutcome, StoreError>) -> Void)
    {
        guard acceptsWrites else {
            for index in writes.indices { completion(index, .failure(.unavailable)) }
            return
        }
        var groups = ShardGroups(shardCount: layout.count)
        for (index, write) in writes.enumerated() {
            switch WriteTargets.route(of: write, in: layout) {
            case .nothing:
                completion(index, .success(WriteOutcome(changes: [])))
            case .singleShard(let shard):
                groups.add(index, to: shard)
            case .multiShard(let participants):
                // Everything before it must be queued first, on every shard: a wide read must never see this
                // write without the ones submitted before it.
                submit(&groups, of: writes, authorizer: authorizer, completion: completion)
                applyCoordinated(write, authorizer: authorizer, participants: participants) {
                    completion(index, $0)
                }
            }
        }
        submit(&groups, of: writes, authorizer: authorizer, completion: completion)
    }

    /// Submits one task per shard that has writes in `groups`, and empties it.
    private func submit(_ groups: inout ShardGroups, of writes: [StoreWrite], authorizer: WriteAuthorizer?,
                        completion: @escaping @Sendable (Int, Result<WriteOutcome, StoreError>) -> Void)
    {
        for index in groups.touched {
            let shard = shards[index]
            let positions = groups.positions[index]
            shard.submit { [self] in
                applyLocal(positions, of: writes, authorizer: authorizer, on: shard, completion: completion)
            }
        }
        groups.removeAll()
    }

    /// Applies the single-shard writes at `positions` of `writes`, in order, on the shard's queue; with a journal
    /// their records are appended together and every completion waits for that append to be durable.
    private func applyLocal(_ positions: [Int], of writes: [StoreWrite], authorizer: WriteAuthorizer?,
                            on shard: Shard,
                            completion: @escaping @Sendable (Int, Result<WriteOutcome, StoreError>) -> Void)
    {
        dispatchPrecondition(condition: .onQueue(shard.queue))
        guard let journal = shard.journal else {
            for position in positions {
                completion(position, applyOnShard(writes[position], authorizer: authorizer, on: shard))
            }
            return
        }
        if journal.hasFailed {
            for position in positions { completion(position, .failure(.unavailable)) }
            return
        }
        var results: [Result<WriteOutcome, StoreError>] = []
        results.reserveCapacity(positions.count)
        for position in positions {
            results.append(applyOnShard(writes[position], authorizer: authorizer, on: shard))
        }
        let applied = results
        journal.append(shard.records, ack: .single { outcome in
            for (position, result) in zip(positions, applied) {
                completion(position, Self.settle(result, journal: outcome))
            }
        })
        shard.records.removeAll()
    }
}

/// The positions of a batch's single-shard writes, grouped by shard, in batch order.
private struct ShardGroups {
    /// Positions by shard index.
    private(set) var positions: [[Int]]
    /// Shards with at least one position, in the order they were first added to.
    private(set) var touched: [Int] = []

    init(shardCount: Int) {
        positions = Array(repeating: [], count: shardCount)
    }

    mutating func add(_ position: Int, to shard: Int) {
        if positions[shard].isEmpty { touched.append(shard) }
        positions[shard].append(position)
    }

    mutating func removeAll() {
        for shard in touched { positions[shard] = [] }
        touched.removeAll(keepingCapacity: true)
    }
}
