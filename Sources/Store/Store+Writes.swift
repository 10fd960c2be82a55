import DataModel
import Dispatch

extension Store {
    /// Applies a write.
    ///
    /// A write whose targets all lie in one shard runs on that shard's queue with no coordination; any other write
    /// (a wide target, or targets in several shards) is a multi-shard write: atomic and isolated across its shards.
    /// `completion` runs once, on a store queue: after the write is applied and reported to the observer, and,
    /// with persistence, once its record is durable; or with the reason it was rejected (nothing applied).
    ///
    /// Server values are resolved when the write is applied, against the data just before it.
    public func write(_ write: StoreWrite,
                      completion: @escaping @Sendable (Result<WriteOutcome, StoreError>) -> Void)
    {
        guard acceptsWrites else {
            completion(.failure(.unavailable))
            return
        }
        let targets = WriteTargets(write)
        guard !targets.entries.isEmpty else {
            completion(.success(WriteOutcome(changes: [])))
            return
        }
        switch targets.route(in: layout) {
        case .singleShard(let index):
            let shard = shards[index]
            shard.submit { [self] in applyLocal(targets, on: shard, completion: completion) }
        case .multiShard(let participants):
            applyCoordinated(targets, participants: participants, completion: completion)
        }
    }

    /// Applies a single-shard write on the shard's queue.
    private func applyLocal(_ targets: WriteTargets, on shard: Shard,
                            completion: @escaping @Sendable (Result<WriteOutcome, StoreError>) -> Void)
    {
        dispatchPrecondition(condition: .onQueue(shard.queue))
        if let journal = shard.journal, journal.hasFailed {
            completion(.failure(.unavailable))
            return
        }
        let planned: (operations: [ShardOperation], changes: [Change])
        do throws(StoreError) {
            planned = try LocalWrite.apply(targets, to: &shard.state, layout: layout, clock: clock)
        } catch {
            completion(.failure(error))
            return
        }
        shard.state.sequence += 1
        let sequence = shard.state.sequence
        if let observer {
            observer(ChangeRecord(shard: shard.index, sequence: sequence, transaction: nil,
                                  participants: [shard.index], changes: planned.changes))
        }
        let outcome = WriteOutcome(changes: planned.changes)
        guard let journal = shard.journal else {
            completion(.success(outcome))
            return
        }
        let record = ShardRecord(sequence: sequence, transaction: nil, operations: planned.operations)
        journal.append(sequence: sequence, payload: ShardRecordCodec.encode(record), ack: .single { result in
            completion(result.map { outcome }.mapError { .persistence($0) })
        })
    }

    /// Holds the participants, plans the write from their captured states, and commits it on each.
    private func applyCoordinated(_ targets: WriteTargets, participants: [Int],
                                  completion: @escaping @Sendable (Result<WriteOutcome, StoreError>) -> Void)
    {
        coordinate(participants, holding: true) { [self] id, states in
            if participants.contains(where: { shards[$0].journal?.hasFailed ?? false }) {
                releaseWithoutChange(participants)
                completion(.failure(.unavailable))
                return
            }
            var plan = CoordinatedWrite(layout: layout, states: states)
            let changes: [Change]
            do throws(StoreError) {
                changes = try plan.apply(targets, timestamp: clock())
            } catch {
                releaseWithoutChange(participants)
                completion(.failure(error))
                return
            }
            let outcome = WriteOutcome(changes: changes)
            let tag = TransactionTag(id: id, participants: participants)
            let durability = TransactionDurability(parts: participants.count) { result in
                completion(result.map { outcome }.mapError { .persistence($0) })
            }
            for index in participants {
                guard var next = plan.states[index] else { continue }
                next.sequence += 1
                let state = next
                let operations = plan.operations[index]
                let shard = shards[index]
                shard.queue.async { [self] in
                    commit(state, operations: operations, tag: tag, changes: changes, durability: durability,
                           on: shard)
                }
            }
        }
    }

    /// Installs a multi-shard write's result on one participant, reports and journals it, and releases the shard.
    private func commit(_ state: ShardState, operations: [ShardOperation], tag: TransactionTag, changes: [Change],
                        durability: TransactionDurability, on shard: Shard)
    {
        dispatchPrecondition(condition: .onQueue(shard.queue))
        shard.state = state
        observer?(ChangeRecord(shard: shard.index, sequence: state.sequence, transaction: tag.id,
                               participants: tag.participants, changes: changes))
        if let journal = shard.journal {
            let record = ShardRecord(sequence: state.sequence, transaction: tag, operations: operations)
            journal.append(sequence: state.sequence, payload: ShardRecordCodec.encode(record),
                           ack: .transactionPart(durability))
        } else {
            durability.partSettled(in: nil, result: .success(()))
        }
        shard.release()
    }

    private func releaseWithoutChange(_ participants: [Int]) {
        for index in participants {
            let shard = shards[index]
            shard.queue.async { shard.release() }
        }
    }
}
