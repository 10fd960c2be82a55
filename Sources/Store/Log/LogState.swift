import DataModel

/// A namespace as its log has built it: the whole tree, the last entry's sequence number and time, and the rules
/// in force. ``apply(_:isReplay:)`` is the namespace's one state transition, a pure function of the state and the
/// entry: no clock, no randomness, no iteration over unordered collections.
public struct LogState: Sendable {
    /// The whole tree.
    public private(set) var root: Node
    /// The sequence number of the last entry applied (0 before the first).
    public private(set) var sequence: UInt64
    /// The last entry's server time (milliseconds since the Unix epoch; 0 before the first).
    public private(set) var timestamp: Double
    /// The rules revision in force.
    public private(set) var rules: RulesRevision
    /// The compiled rules in force, `nil` when there are none (every write is allowed).
    public private(set) var policy: (any AuthorizationPolicy)?
    /// Cluster mode: the nodes' liveness and armed onDisconnect writes (empty on a single node).
    public private(set) var presence = ClusterPresence()
    /// Compiles rules revisions.
    private let compiler: RulesCompiler?

    /// The state of a new namespace: empty, no entry yet, no rules; `compiler` compiles the rules revisions its
    /// entries put in force.
    public init(compiler: RulesCompiler?) {
        root = .empty
        sequence = 0
        timestamp = 0
        rules = .initial
        policy = nil
        self.compiler = compiler
    }

    /// A state as a snapshot recorded it; compiles its rules.
    ///
    /// - Throws: ``LogStateError`` when the rules need a compiler the store was not given, or no longer compile.
    init(root: Node, sequence: UInt64, timestamp: Double, rules: RulesRevision,
         presence: ClusterPresence = ClusterPresence(), compiler: RulesCompiler?) throws(LogStateError)
    {
        self.root = root
        self.sequence = sequence
        self.timestamp = timestamp
        self.rules = rules
        self.presence = presence
        self.compiler = compiler
        policy = nil
        if let source = rules.source {
            guard let compiler else { throw .noCompiler(version: rules.version) }
            guard let compiled = compiler(source) else { throw .rulesDoNotCompile(version: rules.version) }
            policy = compiled
        }
    }

    /// What applying an entry did.
    public enum Outcome: Sendable {
        /// The write was applied; the record is what listeners see.
        case applied(WriteOutcome, ChangeRecord)
        /// The write was rejected and changed nothing.
        case rejected(StoreError)
        /// The entry put a rules revision in force (`compiled` is false when its source did not compile: then
        /// every write judged by the rules is denied until the next revision).
        case rulesInstalled(compiled: Bool)
        /// Cluster mode: the entry changed only who is alive or what is armed.
        case presenceChanged
    }

    /// Applies the entry that follows the state (its sequence number must be ``sequence`` + 1).
    ///
    /// - Parameter isReplay: passed on to the rules, which then need not report their decision again.
    public mutating func apply(_ entry: LogEntry, isReplay: Bool = false) -> Outcome {
        sequence = entry.sequence
        timestamp = entry.timestamp
        switch entry.operation {
        case .rules(let revision):
            rules = revision
            guard let source = revision.source else {
                policy = nil
                return .rulesInstalled(compiled: true)
            }
            let compiled = compiler?(source)
            policy = compiled ?? DenyingPolicy()
            return .rulesInstalled(compiled: compiled != nil)
        case .write(let write, let caller, _):
            switch applyWrite(write, caller: caller, entry: entry, isReplay: isReplay) {
            case .success(let (outcome, record)): return .applied(outcome, record)
            case .failure(let error): return .rejected(error)
            }
        case .armDisconnect(let node, let session, let write):
            presence.lastHeard[node] = entry.sequence
            presence.armed[node, default: [:]][session] = write
            if presence.armed[node]?.isEmpty == true { presence.armed[node] = nil }
            return .presenceChanged
        case .disconnect(let node, let session):
            presence.lastHeard[node] = entry.sequence
            guard let write = presence.armed[node]?.removeValue(forKey: session) else { return .presenceChanged }
            if presence.armed[node]?.isEmpty == true { presence.armed[node] = nil }
            return runDisconnectWrite(write, entry: entry)
        case .heartbeat(let node):
            presence.lastHeard[node] = entry.sequence
            return .presenceChanged
        case .nodeDown(let node, let lastHeard):
            guard presence.lastHeard[node] == lastHeard, let write = presence.combinedWrite(of: node)
            else { return .presenceChanged }
            presence.armed[node] = nil
            presence.lastHeard[node] = nil
            return runDisconnectWrite(write, entry: entry)
        }
    }

    /// Runs an onDisconnect write (privileged: it was judged when registered).
    private mutating func runDisconnectWrite(_ write: StoreWrite, entry: LogEntry) -> Outcome {
        switch applyWrite(write, caller: .privileged, entry: entry, isReplay: false) {
        case .success(let (outcome, record)): return .applied(outcome, record)
        case .failure(let error): return .rejected(error)
        }
    }

    /// Applies write entry `entry` (whose operation is `write` by `caller`): what it changed, or why it was rejected
    /// (then nothing changed).
    mutating func applyWrite(_ write: StoreWrite, caller: WriteCaller, entry: LogEntry, isReplay: Bool)
        -> Result<(WriteOutcome, ChangeRecord), StoreError>
    {
        sequence = entry.sequence
        timestamp = entry.timestamp
        do throws(StoreError) {
            return .success(try apply(write, caller: caller, entry: entry, isReplay: isReplay))
        } catch {
            return .failure(error)
        }
    }

    /// Applies one write, or throws why it is rejected (then nothing changed).
    private mutating func apply(_ write: StoreWrite, caller: WriteCaller, entry: LogEntry, isReplay: Bool)
        throws(StoreError) -> (WriteOutcome, ChangeRecord)
    {
        var judge: (policy: any AuthorizationPolicy, auth: JSONValue?)?
        if case .user(let auth) = caller, let policy { judge = (policy, auth) }
        if judge == nil, case .set(.node(let path), let value, let expectedHash) = write, value.serverValues.isEmpty {
            // The common case, in one walk down the tree and in place: a plain set nobody needs to judge.
            if let expectedHash {
                let current = root.descendant(at: path)
                if Store.hash(of: current) != expectedHash { throw .stale(current: current) }
            }
            var old = Node.empty
            let node = value.node
            root.modifyDescendant(at: path) { current in
                old = current
                current = node
            }
            let change = Change(path: path, oldValue: old, newValue: node)
            return (WriteOutcome(change: change), ChangeRecord(sequence: entry.sequence, changes: [change]))
        }
        if case .set(let target, _, let expected?) = write {
            let current = root.descendant(at: target.path)
            if Store.hash(of: current) != expected { throw .stale(current: current) }
        }
        let preview = try WritePreview(
            write, on: root, at: entry.timestamp,
            pushKey: Key(trusted: PushIDGenerator.id(timestamp: Int64(entry.timestamp), sequence: entry.sequence)))
        if let judge {
            let question = preview.question(auth: judge.auth, timestamp: entry.timestamp,
                                            operation: write.operationName, caller: isReplay ? nil : "store")
            guard judge.policy.mayWrite(question) else { throw .denied }
        }
        let changes = preview.changes
        root = preview.after
        return (WriteOutcome(changes: changes),
                ChangeRecord(sequence: entry.sequence, changes: changes, updateBase: write.updateBase))
    }
}

/// Why a recorded state cannot be restored.
public enum LogStateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The log holds rules but the store was opened without a ``RulesCompiler``.
    case noCompiler(version: UInt64)
    /// The rules recorded in a snapshot no longer compile.
    case rulesDoNotCompile(version: UInt64)

    /// A one-line message.
    public var description: String {
        switch self {
        case .noCompiler(let version): return "rules version \(version) is recorded, but no rules compiler was given"
        case .rulesDoNotCompile(let version): return "rules version \(version) does not compile"
        }
    }
}

/// The policy of a rules revision that did not compile: every judged read and write is denied (failing closed).
private struct DenyingPolicy: AuthorizationPolicy {
    func mayRead(_ question: ReadQuestion) -> Bool { false }
    func mayWrite(_ question: WriteQuestion) -> Bool { false }
}
