import DataModel

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
    /// Where the rule's expression starts in the rules file (`nil` when not known).
    public var position: SourcePosition?

    /// Creates a trace entry.
    public init(kind: RuleKind, rulePath: String, location: Path, source: String, outcome: RuleOutcome,
                position: SourcePosition? = nil) {
        self.kind = kind
        self.rulePath = rulePath
        self.location = location
        self.source = source
        self.outcome = outcome
        self.position = position
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
