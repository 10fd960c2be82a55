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
