import DataModel
import Foundation

/// The data a transaction block reads and changes (the SDK's `MutableData`); children share their parent's data.
public final class MutableData: @unchecked Sendable {  // used by one transaction attempt at a time
    /// The data of the whole transaction, shared by the children made from it.
    final class Storage {
        var node: Node
        init(node: Node) { self.node = node }
    }

    let storage: Storage
    let path: Path

    init(storage: Storage, path: Path) {
        self.storage = storage
        self.path = path
    }

    /// The last key of this data's location (`nil` for the transaction's own location).
    public var key: String? { path.lastKey?.string }

    /// The value (as ``DataSnapshot/value`` gives it); set it to change the data (`nil` removes it).
    public var value: Any? {
        get { ValueConversion.value(of: storage.node.descendant(at: path)) }
        set {
            var node = (try? ValueConversion.writeValue(newValue).node) ?? .empty
            // Setting the value keeps the priority, as the SDKs do.
            if node.priority == nil, !node.isEmpty, let priority = storage.node.descendant(at: path).priority {
                node = Self.prioritized(node, priority)
            }
            storage.node = storage.node.setting(node, at: path)
        }
    }

    /// The priority; set it to change it.
    public var priority: Any? {
        get { storage.node.descendant(at: path).priority.map(ValueConversion.value(of:)) }
        set {
            let current = storage.node.descendant(at: path)
            let written = (try? ValueConversion.writeValue([".value": value ?? NSNull(), ".priority": newValue ?? NSNull()]).node)
            storage.node = storage.node.setting(written ?? current, at: path)
        }
    }

    /// Whether there are children.
    public var hasChildren: Bool { storage.node.descendant(at: path).hasChildren }

    /// How many children there are.
    public var childrenCount: UInt { UInt(storage.node.descendant(at: path).childCount) }

    /// Whether there is data at `path` below.
    public func hasChild(atPath path: String) -> Bool {
        guard let relative = try? Path(path) else { return false }
        return !storage.node.descendant(at: self.path.appending(relative)).isEmpty
    }

    /// The data at `path` below, changeable.
    public func childData(byAppendingPath path: String) -> MutableData {
        MutableData(storage: storage, path: self.path.appending((try? Path(path)) ?? .root))
    }

    /// The children, by priority then key.
    public var children: [MutableData] {
        QueryParams.all.select(from: storage.node.descendant(at: path)).map { entry in
            MutableData(storage: storage, path: path.child(entry.key))
        }
    }

    private static func prioritized(_ node: Node, _ priority: Priority) -> Node {
        if let leaf = node.leafValue { return Node(leaf, priority: priority) }
        return Node(children: node.children, priority: priority)
    }
}

/// What a transaction block decides (the SDK's `TransactionResult`).
public struct TransactionResult: Sendable {
    let node: Node?

    /// Commit `value`'s data.
    public static func success(withValue value: MutableData) -> TransactionResult {
        TransactionResult(node: value.storage.node.descendant(at: value.path))
    }

    /// Change nothing.
    public static func abort() -> TransactionResult {
        TransactionResult(node: nil)
    }
}

extension DatabaseReference {
    /// Most attempts of a transaction before it gives up (as the SDKs).
    static let maxTransactionAttempts = 25

    /// Runs `block` on the current data and writes what it returns, only if nobody changed the data meanwhile
    /// (compare-and-set); when somebody did, runs it again on their data. The completion gets `(error,
    /// committed, snapshot)`. `block` runs on the callback queue and may run several times.
    public func runTransactionBlock(_ block: @escaping (MutableData) -> TransactionResult,
                                    andCompletionBlock completion: (((any Error)?, Bool, DataSnapshot?) -> Void)? = nil)
    {
        attemptTransaction(block, attempt: 1, completion: completion)
    }

    /// Runs the transaction; returns whether it committed and the data.
    public func runTransactionBlock(_ block: @escaping (MutableData) -> TransactionResult) async throws
        -> (committed: Bool, snapshot: DataSnapshot)
    {
        try await withCheckedThrowingContinuation { continuation in
            runTransactionBlock(block) { error, committed, snapshot in
                if let error { return continuation.resume(throwing: error) }
                guard let snapshot else {
                    return continuation.resume(throwing: DatabaseError(status: "unknown", message: "no data"))
                }
                continuation.resume(returning: (committed, snapshot))
            }
        }
    }

    private func attemptTransaction(_ block: @escaping (MutableData) -> TransactionResult, attempt: Int,
                                    completion: (((any Error)?, Bool, DataSnapshot?) -> Void)?)
    {
        let engine = database.engine
        engine.serverData(at: path) { [self] result in
            // The block is the caller's code: it runs on the callback queue, never on the engine's.
            engine.callbacks.raise { [self] in decide(result, block, attempt: attempt, completion: completion) }
        }
    }

    private func decide(_ result: Result<Node, DatabaseError>, _ block: @escaping (MutableData) -> TransactionResult,
                        attempt: Int, completion: (((any Error)?, Bool, DataSnapshot?) -> Void)?)
    {
        let engine = database.engine
        switch result {
        case .failure(let error):
            completion?(error, false, nil)
        case .success(let current):
            let data = MutableData(storage: MutableData.Storage(node: current), path: .root)
            guard let node = block(data).node else {
                completion?(nil, false, DataSnapshot(reference: self, node: current, query: nil))
                return
            }
            let answered = WriteCompletion(block: { error, _ in
                let error = error as? DatabaseError
                if error?.status == "datastale", attempt < Self.maxTransactionAttempts {
                    // Somebody wrote first: try again on their data, after a random pause that grows with the
                    // attempts, so that clients racing on one location do not keep colliding.
                    let pause = Double.random(in: 0...min(0.005 * Double(attempt * attempt), 0.5))
                    return engine.loop.post {
                        engine.loop.after(pause) {
                            self.attemptTransaction(block, attempt: attempt + 1, completion: completion)
                        }
                    }
                }
                let failure = error?.status == "datastale"
                    ? DatabaseError(status: "maxretries", message: "the transaction was retried too many times")
                    : error
                let written = failure == nil ? node : current
                completion?(failure, failure == nil, DataSnapshot(reference: self, node: written, query: nil))
            }, reference: self)
            engine.write([(path, WriteValue(node: node))], merge: false, at: path, hash: current.hash,
                         completion: answered)
        }
    }
}
