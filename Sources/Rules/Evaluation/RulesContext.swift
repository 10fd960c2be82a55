import DataModel

/// The request-independent inputs of an authorization: who asks, the data as it is, and the time.
public struct RulesContext: Sendable {
    /// The rules' `auth` variable: `nil` (or `.null`) when unauthenticated, otherwise the object the gateway builds
    /// from the verified token — `{"uid": …, "provider": …, "token": {claims}}` (security-rules.md §8).
    public var auth: JSONValue?
    /// The whole tree before the operation (`root`; `data` is read from it). The gateway may pass a tree holding
    /// only the parts of the database it has at hand; rules reading elsewhere then see empty data.
    public var root: Node
    /// The rules' `now`: server time in milliseconds since the Unix epoch — for a write, the same timestamp that
    /// resolved its server values, so `newData.val() == now` holds for `{".sv": "timestamp"}` (§3.7).
    public var now: Double
    /// Whether to record every rule evaluated in ``RulesDecision/trace`` (for `--explain-denials`); off on the fast
    /// path, where a decision allocates nothing for the trace.
    public var explain: Bool

    /// Creates a context.
    public init(auth: JSONValue?, root: Node, now: Double, explain: Bool = false) {
        self.auth = auth
        self.root = root
        self.now = now
        self.explain = explain
    }
}

/// The answer to one authorization request.
public struct RulesDecision: Sendable, CustomStringConvertible {
    /// Whether the operation may proceed.
    public var allowed: Bool
    /// Every rule evaluated on the way, in order, with its outcome — filled only when ``RulesContext/explain`` is
    /// set. A denial with an empty trace (when explaining) means no rule granted access: none exists on the path.
    public var trace: [RuleEvaluation]

    /// Creates a decision.
    public init(allowed: Bool, trace: [RuleEvaluation] = []) {
        self.allowed = allowed
        self.trace = trace
    }

    /// `allowed`/`denied` followed by one trace line per rule.
    public var description: String {
        ([allowed ? "allowed" : "denied"] + trace.map { "  " + $0.description }).joined(separator: "\n")
    }
}

/// One rule evaluated while authorizing: which, where, and how it came out.
public struct RuleEvaluation: Sendable, Equatable, CustomStringConvertible {
    /// `.read`, `.write` or `.validate`.
    public var kind: RuleKind
    /// The rule's place in the rules tree, such as `/rooms/$room/.write`.
    public var rulePath: String
    /// The data location it was evaluated at, such as `/rooms/lobby`.
    public var location: Path
    /// The rule's expression text.
    public var source: String
    /// The result.
    public var outcome: RuleOutcome

    /// Creates a trace entry.
    public init(kind: RuleKind, rulePath: String, location: Path, source: String, outcome: RuleOutcome) {
        self.kind = kind
        self.rulePath = rulePath
        self.location = location
        self.source = source
        self.outcome = outcome
    }

    /// `/rooms/$room/.write at /rooms/lobby: false — auth != null && …`.
    public var description: String {
        "\(rulePath) at \(location): \(outcome) — \(source)"
    }
}

/// How one rule evaluation came out.
public enum RuleOutcome: Sendable, Equatable, CustomStringConvertible {
    /// The rule evaluated to `true`.
    case `true`
    /// The rule evaluated to `false`.
    case `false`
    /// Evaluation failed, which counts as `false` (security-rules.md §5.5); the message says why.
    case error(String)

    /// `true`, `false` or `error: message`.
    public var description: String {
        switch self {
        case .true: return "true"
        case .false: return "false"
        case .error(let message): return "error: \(message)"
        }
    }
}

/// Live counts of one rule's outcomes since the rules were loaded.
public struct RuleCoverage: Sendable, Equatable {
    /// `.read`, `.write` or `.validate`.
    public var kind: RuleKind
    /// The rule's place in the rules tree.
    public var rulePath: String
    /// The expression text.
    public var source: String
    /// Where the rule is in the file.
    public var position: SourcePosition
    /// Evaluations that gave `true`.
    public var trueCount: Int
    /// Evaluations that gave `false`.
    public var falseCount: Int
    /// Evaluations that failed with an error.
    public var errorCount: Int

    /// Creates a coverage record.
    public init(
        kind: RuleKind, rulePath: String, source: String, position: SourcePosition, trueCount: Int, falseCount: Int,
        errorCount: Int
    ) {
        self.kind = kind
        self.rulePath = rulePath
        self.source = source
        self.position = position
        self.trueCount = trueCount
        self.falseCount = falseCount
        self.errorCount = errorCount
    }

    /// Total evaluations.
    public var evaluations: Int { trueCount + falseCount + errorCount }
}

/// An `.indexOn` declaration: the rules-tree location (segments, `$wildcards` kept) and the indexed child paths or
/// `.value` (security-rules.md §3.4).
public struct RulesIndexDeclaration: Sendable, Equatable {
    /// Rules-tree segments from the root, such as `["rooms", "$room", "messages"]`.
    public var path: [String]
    /// The declared child paths (`"timestamp"`, `"address/zip"`) or `".value"`.
    public var keys: [String]

    /// Creates a declaration.
    public init(path: [String], keys: [String]) {
        self.path = path
        self.keys = keys
    }
}
