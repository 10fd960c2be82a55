import DataModel
import Synchronization

/// One `.read`, `.write` or `.validate` rule as loaded: its compiled expression, where it came from, and live
/// coverage counters.
final class CompiledRule: Sendable {
    /// The outcome of one evaluation.
    enum Outcome {
        case `true`
        case `false`
        case error(EvaluationError)
    }

    /// What the rule evaluates.
    enum Body: Sendable {
        /// A JSON `true`/`false` in the file.
        case constant(Bool)
        case expression(CompiledExpression)
    }

    let kind: RuleKind
    /// The rule's place in the rules tree, such as `/rooms/$room/.write`.
    let rulePath: String
    /// The expression text as written (after JSON decoding), or `true`/`false`.
    let source: String
    /// Where the rule's value starts in the file.
    let position: SourcePosition
    let body: Body
    /// The range of the whole expression, which a non-boolean result is reported at.
    private let wholeSource: SourceRange
    private let trueCount = Atomic<Int>(0)
    private let falseCount = Atomic<Int>(0)
    private let errorCount = Atomic<Int>(0)

    init(kind: RuleKind, rulePath: String, source: String, position: SourcePosition, body: Body) {
        self.kind = kind
        self.rulePath = rulePath
        self.source = source
        self.position = position
        self.body = body
        self.wholeSource = SourceRange(0..<source.utf8.count)
    }

    /// Whether the rule is the constant `false` (JSON `false` or the expression `false`).
    var isAlwaysFalse: Bool {
        switch body {
        case .constant(false), .expression(.constant(.bool(false))): return true
        default: return false
        }
    }

    /// Whether the rule is the constant `true`.
    var isAlwaysTrue: Bool {
        switch body {
        case .constant(true), .expression(.constant(.bool(true))): return true
        default: return false
        }
    }

    /// Evaluates the rule and counts the outcome.
    func evaluate(_ context: EvaluationContext) -> Outcome {
        let outcome: Outcome
        switch body {
        case .constant(let flag):
            outcome = flag ? .true : .false
        case .expression(let expression):
            do throws(EvaluationError) {
                outcome = try context.evaluateRule(expression, source: wholeSource) ? .true : .false
            } catch {
                outcome = .error(error)
            }
        }
        switch outcome {
        case .true: trueCount.wrappingAdd(1, ordering: .relaxed)
        case .false: falseCount.wrappingAdd(1, ordering: .relaxed)
        case .error: errorCount.wrappingAdd(1, ordering: .relaxed)
        }
        return outcome
    }

    /// The counts so far.
    var coverage: RuleCoverage {
        RuleCoverage(
            kind: kind, rulePath: rulePath, source: source, position: position,
            trueCount: trueCount.load(ordering: .relaxed), falseCount: falseCount.load(ordering: .relaxed),
            errorCount: errorCount.load(ordering: .relaxed))
    }

    /// A trace entry for an evaluation at `location`.
    func traceEntry(_ outcome: Outcome, location: ArraySlice<Key>) -> RuleEvaluation {
        let publicOutcome: RuleOutcome
        switch outcome {
        case .true: publicOutcome = .true
        case .false: publicOutcome = .false
        case .error(let error): publicOutcome = .error(describe(error))
        }
        return RuleEvaluation(
            kind: kind, rulePath: rulePath, location: Path(keys: Array(location)), source: source, outcome: publicOutcome,
            position: position)
    }

    /// The error's message with the part of the expression that failed.
    private func describe(_ error: EvaluationError) -> String {
        let bytes = Array(source.utf8)
        let range = error.source.range.clamped(to: 0..<bytes.count)
        guard !range.isEmpty, range.count < bytes.count else { return error.message }
        return "\(error.message) in `\(String(decoding: bytes[range], as: UTF8.self))`"
    }
}
