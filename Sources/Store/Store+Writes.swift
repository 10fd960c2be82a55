import DataModel
import Dispatch

extension Store {
    /// Applies a write.
    ///
    /// A write whose targets all lie in one shard runs on that shard's queue with no coordination; any other write
    /// (a wide target, or targets in several shards) is a multi-shard write: atomic and isolated across its shards.
    /// `completion` runs once, on a store queue: after the write is applied and reported to the observer, and,
    /// with persistence, once its record is durable; or with the reason it was rejected (nothing applied), which
    /// with persistence is delivered only once the writes applied before it on its shards are durable.
    ///
    /// Server values are resolved when the write is applied, against the data just before it. To submit many
    /// writes at once, ``write(batch:completion:)`` costs one queue hop per shard instead of one per write.
    public func write(_ write: StoreWrite, authorizer: WriteAuthorizer? = nil,
                      completion: @escaping @Sendable (Result<WriteOutcome, StoreError>) -> Void)
    {
        guard acceptsWrites else {
            completion(.failure(.unavailable))
            return
        }
        switch WriteTargets.route(of: write, in: layout) {
        case .nothing:
            completion(.success(WriteOutcome(changes: [])))
        case .singleShard(let index):
            let shard = shards[index]
            shard.submit { [self] in applyLocal(write, authorizer: authorizer, on: shard, completion: completion) }
        case .multiShard(let participants):
            applyCoordinated(write, authorizer: authorizer, participants: participants, completion: completion)
        }
    }

    /// Applies a single-shard write on the shard's queue.
    private func applyLocal(_ write: StoreWrite, authorizer: WriteAuthorizer?, on shard: Shard,
                            completion: @escaping @Sendable (Result<WriteOutcome, StoreError>) -> Void)
    {
        dispatchPrecondition(condition: .onQueue(shard.queue))
        guard let journal = shard.journal else {
            completion(applyOnShard(write, authorizer: authorizer, on: shard))
            return
        }
        if journal.hasFailed {
            completion(.failure(.unavailable))
            return
        }
        let result = applyOnShard(write, authorizer: authorizer, on: shard)
        journal.append(shard.records, ack: .single { completion(Self.settle(result, journal: $0)) })
        shard.records.removeAll()
    }

    /// Applies a single-shard write on its shard's queue: installs it in the shard's state, reports it to the
    /// observer and, with a journal, frames its record into the shard's ``Shard/records``; returns the outcome
    /// (not yet durable) or why the write was rejected.
    func applyOnShard(_ write: StoreWrite, authorizer: WriteAuthorizer?, on shard: Shard)
        -> Result<WriteOutcome, StoreError>
    {
        let applied: LocalWrite.Applied
        if let wholeTree, let authorizer {
            // Plan on a copy, so a refused write leaves the shard untouched; the whole tree moves in the same step.
            let timestamp = clock()
            var candidate = shard.state
            do throws(StoreError) {
                applied = try LocalWrite.apply(write, to: &candidate, layout: layout, clock: { timestamp })
            } catch {
                return .failure(error)
            }
            guard wholeTree.advance(by: applied.changes, of: write, timestamp: timestamp, authorizer: authorizer) else {
                return .failure(.denied)
            }
            shard.state = candidate
        } else {
            do throws(StoreError) {
                applied = try LocalWrite.apply(write, to: &shard.state, layout: layout, clock: clock)
            } catch {
                return .failure(error)
            }
            wholeTree?.advance(by: applied.changes)
        }
        shard.state.sequence += 1
        let sequence = shard.state.sequence
        if let observer {
            observer(ChangeRecord(shard: shard.index, sequence: sequence, transaction: nil,
                                  participants: shard.soloParticipants, changes: applied.changes,
                                  updateBase: write.updateBase))
        }
        if shard.journal != nil {
            shard.records.append(sequence: sequence) { applied.encodeRecord(sequence: sequence, into: &$0) }
        }
        return .success(applied.outcome)
    }

    /// The result delivered for a write once its journal settled: a journal failure fails an applied write; a
    /// rejected write keeps its own reason.
    static func settle(_ result: Result<WriteOutcome, StoreError>, journal: Result<Void, JournalError>)
        -> Result<WriteOutcome, StoreError>
    {
        if case .success = result, case .failure(let error) = journal { return .failure(.persistence(error)) }
        return result
    }

    /// Holds the participants, plans the write from their captured states, and commits it on each.
    func applyCoordinated(_ write: StoreWrite, authorizer: WriteAuthorizer?, participants: [Int],
                          completion: @escaping @Sendable (Result<WriteOutcome, StoreError>) -> Void)
    {
        let targets = WriteTargets(write)
        coordinate(participants, holding: true) { [self] id, states in
            if participants.contains(where: { shards[$0].journal?.hasFailed ?? false }) {
                release(participants, rejecting: .unavailable, completion: completion)
                return
            }
            var plan = CoordinatedWrite(layout: layout, states: states)
            let changes: [Change]
            let timestamp = clock()
            do throws(StoreError) {
                changes = try plan.apply(targets, timestamp: timestamp)
            } catch {
                release(participants, rejecting: error, completion: completion)
                return
            }
            if let authorizer, let wholeTree,
               !wholeTree.advance(by: changes, of: write, timestamp: timestamp, authorizer: authorizer)
            {
                release(participants, rejecting: .denied, completion: completion)
                return
            }
            if authorizer == nil { wholeTree?.advance(by: changes) }
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
                    commit(state, operations: operations, tag: tag, changes: changes, updateBase: write.updateBase,
                           durability: durability, on: shard)
                }
            }
        }
    }

    /// Installs a multi-shard write's result on one participant, reports and journals it, and releases the shard.
    private func commit(_ state: ShardState, operations: [ShardOperation], tag: TransactionTag, changes: [Change],
                        updateBase: Path?, durability: TransactionDurability, on shard: Shard)
    {
        dispatchPrecondition(condition: .onQueue(shard.queue))
        shard.state = state
        observer?(ChangeRecord(shard: shard.index, sequence: state.sequence, transaction: tag.id,
                               participants: tag.participants, changes: changes, updateBase: updateBase))
        if let journal = shard.journal {
            let record = ShardRecord(sequence: state.sequence, transaction: tag, operations: operations)
            shard.records.append(sequence: state.sequence) { ShardRecordCodec.encode(record, into: &$0) }
            journal.append(shard.records, ack: .transactionPart(durability))
            shard.records.removeAll()
        } else {
            durability.partSettled(in: nil, result: .success(()))
        }
        shard.release()
    }

    /// Releases the participants of a rejected multi-shard write. With persistence, the rejection is delivered
    /// once every participant's earlier records are durable (a barrier in each journal), like a single-shard
    /// rejection.
    private func release(_ participants: [Int], rejecting error: StoreError,
                         completion: @escaping @Sendable (Result<WriteOutcome, StoreError>) -> Void)
    {
        let barrier = TransactionDurability(parts: participants.count) { _ in completion(.failure(error)) }
        for index in participants {
            let shard = shards[index]
            shard.queue.async {
                if let journal = shard.journal {
                    journal.append(FramedRecords(), ack: .transactionPart(barrier))
                } else {
                    barrier.partSettled(in: nil, result: .success(()))
                }
                shard.release()
            }
        }
    }
}
