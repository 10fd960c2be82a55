import DataModel

/// The security rules of one rules revision, as everything that asks about access applies them: the namespace's
/// log judges writes with it, the gateway judges reads and onDisconnect registrations with it, and the console's
/// simulator asks it the same questions (docs/protocol/security-rules.md). The gateway compiles it from a
/// ``RulesRevision`` through the store's ``RulesCompiler``; the log holds the one in force.
///
/// A policy must be a pure function of the question (no clock, no randomness): the log replays its decisions.
public protocol AuthorizationPolicy: Sendable {
    /// Whether the read in `question` is allowed.
    func mayRead(_ question: ReadQuestion) -> Bool
    /// Whether the write in `question` may be applied.
    func mayWrite(_ question: WriteQuestion) -> Bool
}

/// Compiles a rules revision's source into a policy; `nil` when the source does not compile. The store compiles
/// every revision it sequences or replays with it.
public typealias RulesCompiler = @Sendable (_ source: [UInt8]) -> (any AuthorizationPolicy)?

/// A read as the rules judge it: a location (with a query, or the whole location), who reads, and the tree and
/// time of the read's place in the namespace's order.
public struct ReadQuestion: Sendable {
    /// The location read.
    public let path: Path
    /// The query, `nil` for the whole location.
    public let query: QueryParams?
    /// The rules' `auth`.
    public let auth: JSONValue?
    /// The whole tree.
    public let root: Node
    /// The rules' `now` (milliseconds since the Unix epoch).
    public let now: Double
    /// Who asks, named in live reports (the console's feed, denial explanations); `nil` asks silently.
    public let caller: String?

    /// A read of `path` (with `query`) by `auth` on `root` at `now`.
    public init(path: Path, query: QueryParams?, auth: JSONValue?, root: Node, now: Double, caller: String?) {
        self.path = path
        self.query = query
        self.auth = auth
        self.root = root
        self.now = now
        self.caller = caller
    }
}

/// A write as the rules judge it: the write, who makes it, and the whole tree before and after it, as
/// ``WritePreview`` computes them (the one place a write becomes a rules question).
public struct WriteQuestion: Sendable {
    /// The write being decided on (a push as the set of the child it creates).
    public let write: StoreWrite
    /// The rules' `auth`.
    public let auth: JSONValue?
    /// The whole tree just before the write.
    public let oldRoot: Node
    /// The whole tree with the write applied and its server values resolved.
    public let newRoot: Node
    /// The write's server time (milliseconds): the rules' `now`.
    public let timestamp: Double
    /// The locations the write changes.
    public let changes: [Change]
    /// What live reports call the operation (`set`, `update`, `push`, `onDisconnect`).
    public let operation: String
    /// Who asks, named in live reports; `nil` asks silently (a replay: the decision was reported when taken).
    public let caller: String?
}
