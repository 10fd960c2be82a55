import DataModel
import Dispatch
import Synchronization

extension Store {
    /// Sequences and applies a write by `caller`.
    ///
    /// `completion` runs once, on a store queue, after the write was applied and reported to the observer and
    /// once its entry is durable (in the journal, with persistence; in a cluster, once the log holds it and this
    /// replica applied it at its place); or with the reason it was rejected (nothing applied: a failed
    /// compare-and-set, a server value that cannot be resolved, the rules' denial), also once its entry is durable.
    /// Completions run in log order.
    public func write(_ write: StoreWrite, by caller: WriteCaller,
                      completion: @escaping @Sendable (Result<WriteOutcome, StoreError>) -> Void)
    {
        submit(joinsTurn: true) { [self] in
            if let refusal = driver.refusal() { return driver.settleRefused { completion(.failure(refusal)) } }
            driver.write(write, by: caller, completion: completion)
        }
    }

    /// Sequences `writes`, all by `caller`, one after the other in one task: as if each were passed to
    /// ``write(_:by:completion:)`` in order, at the cost of one queue hop and one journal hand-off for all.
    ///
    /// This is the path for the gateway: one read from a connection often carries many writes. `completion` runs
    /// once per write, with the write's index in `writes`, in order, under the conditions of
    /// ``write(_:by:completion:)``.
    public func write(batch writes: [StoreWrite], by caller: WriteCaller,
                      completion: @escaping @Sendable (Int, Result<WriteOutcome, StoreError>) -> Void)
    {
        submit(joinsTurn: true) { [self] in
            if let refusal = driver.refusal() {
                return driver.settleRefused { for index in writes.indices { completion(index, .failure(refusal)) } }
            }
            driver.write(batch: writes, by: caller, completion: completion)
        }
    }

    /// Puts rules in force for every operation sequenced after this call: a log entry with the next version,
    /// unless `source` is the text already in force. `completion` gets the revision in force afterwards (once
    /// durable), or the reason the entry could not be made.
    ///
    /// - Parameter source: the rules' text (compiled with the store's ``RulesCompiler``), `nil` for no rules.
    public func installRules(source: [UInt8]?,
                             completion: (@Sendable (Result<RulesRevision, StoreError>) -> Void)? = nil)
    {
        // Readers without a place in the order (``current``) wait for the change: whoever made it may be answered
        // before it is sequenced.
        let sequencer = self.sequencer
        sequencer.rulesChangesPending.add(1, ordering: .releasing)
        let settled: @Sendable (Result<RulesRevision, StoreError>) -> Void = { result in
            sequencer.rulesChangesPending.subtract(1, ordering: .releasing)
            completion?(result)
        }
        submit { [self] in
            if sequencer.state.rules.source == source {
                settled(.success(sequencer.state.rules))
                return
            }
            if let refusal = driver.refusal() {
                settled(.failure(refusal))
                return
            }
            driver.installRules(source: source, completion: settled)
        }
    }

    /// Reads the node at `path`, in order with every write submitted before.
    public func read(_ path: Path, completion: @escaping @Sendable (Node) -> Void) {
        inOrder { snapshot in completion(snapshot.root.descendant(at: path)) }
    }

    /// Reads the result of `query` at `path`: the selected children as an object, without the location's own
    /// priority (data-model.md §8.3), or the node itself when the query selects everything.
    ///
    /// The value is taken in order like ``read(_:completion:)``; a filtering query is then evaluated on a global
    /// queue (O(n log n) in the location's children), so a large location never stalls the sequencer.
    public func read(_ path: Path, query: QueryParams, completion: @escaping @Sendable (Node) -> Void) {
        guard !query.loadsAllData else {
            read(path, completion: completion)
            return
        }
        read(path) { node in
            DispatchQueue.global().async { completion(query.result(from: node)) }
        }
    }
}
