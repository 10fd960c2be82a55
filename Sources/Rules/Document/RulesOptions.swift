/// How a rules file is loaded and evaluated: limits against hostile or runaway input, and strictness.
public struct RulesOptions: Sendable, Equatable {
    /// Size and complexity limits.
    public var limits: RulesLimits
    /// Reject operands of `!`, `&&`, `||`, `?:` and whole rules whose type is known only at run time (such as
    /// `auth.token.admin && …`), as the targaryen evaluator does. Off by default: such rules load with a warning and
    /// fail at run time when the value is not a boolean — whether Firebase accepts them at deploy time is
    /// unconfirmed (security-rules.md §1.4), and refusing a file Firebase accepts would lock an operator out.
    public var strictBooleanOperands: Bool

    /// Creates options; the defaults suit production rules files.
    public init(limits: RulesLimits = RulesLimits(), strictBooleanOperands: Bool = false) {
        self.limits = limits
        self.strictBooleanOperands = strictBooleanOperands
    }
}

/// Limits that keep loading and evaluating rules bounded whatever the input.
public struct RulesLimits: Sendable, Equatable {
    /// Largest rules file accepted, in bytes (default 1 MiB; real files, even compiled by Bolt, are far smaller).
    public var maxFileBytes: Int
    /// Deepest nesting of JSON objects and arrays in the file (default 64; data paths are at most 32 keys deep).
    public var maxNesting: Int
    /// Longest single rule expression, in UTF-8 bytes (default 64 KiB).
    public var maxExpressionBytes: Int
    /// Deepest nesting of one expression — parentheses, operators, member chains (default 100); bounds the
    /// recursion of parsing, checking and evaluation.
    public var maxExpressionDepth: Int
    /// Largest compiled regular expression, in program steps (default 10,000; `{n,m}` repeats what it quantifies).
    public var maxRegexInstructions: Int
    /// Most work one `matches()` call may do, in state steps (default 2,000,000 — a few milliseconds); past it the
    /// rule fails, so a huge string cannot stall a connection's queue.
    public var maxRegexSteps: Int
    /// Most errors reported for one file before giving up (default 50).
    public var maxErrors: Int

    /// Creates limits; every parameter has a generous default.
    public init(
        maxFileBytes: Int = 1 << 20, maxNesting: Int = 64, maxExpressionBytes: Int = 64 << 10, maxExpressionDepth: Int = 100,
        maxRegexInstructions: Int = 10_000, maxRegexSteps: Int = 2_000_000, maxErrors: Int = 50
    ) {
        self.maxFileBytes = maxFileBytes
        self.maxNesting = maxNesting
        self.maxExpressionBytes = maxExpressionBytes
        self.maxExpressionDepth = maxExpressionDepth
        self.maxRegexInstructions = maxRegexInstructions
        self.maxRegexSteps = maxRegexSteps
        self.maxErrors = maxErrors
    }
}
