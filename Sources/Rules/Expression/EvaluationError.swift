/// Why evaluating a rule expression failed at run time. Any such failure makes the whole expression fail — it
/// counts as `false` for that rule, and surrounding operators do not catch it (security-rules.md §5.5).
struct EvaluationError: Error, Sendable {
    /// What went wrong; messages are built only when an explanation is asked for.
    enum Problem: Sendable {
        /// A string method or property on something that is not a string.
        case notAString(member: String, found: String)
        /// A string argument that is not a string.
        case argumentNotAString(method: String, found: String)
        /// A snapshot method on something that is not a snapshot.
        case notASnapshot(method: String, found: String)
        /// `parent()` of the root.
        case parentOfRoot
        /// A property read on a value that has none.
        case noProperty(name: String, found: String)
        /// A subscript with an index of the wrong type.
        case invalidIndex(found: String)
        /// `<`, `<=`, `>`, `>=` on anything but two numbers or two strings.
        case orderingTypes(operator: String, left: String, right: String)
        /// Arithmetic on anything but numbers (and `+` on numbers and strings).
        case arithmeticTypes(operator: String, left: String, right: String)
        /// Unary minus on a non-number.
        case negateType(found: String)
        /// `!`, `&&`, `||` or `?:` on a non-boolean.
        case notBoolean(context: String, found: String)
        /// The whole rule produced something other than a boolean.
        case resultNotBoolean(found: String)
        /// A regular expression needed more steps than the limit allows.
        case regexTooExpensive(limit: Int)
    }

    var problem: Problem
    /// The part of the expression that failed.
    var source: SourceRange

    init(_ problem: Problem, _ source: SourceRange) {
        self.problem = problem
        self.source = source
    }

    /// A sentence for traces and logs.
    var message: String {
        switch problem {
        case .notAString(let member, let found): return "\(member) needs a string, found \(found)"
        case .argumentNotAString(let method, let found): return "the argument of \(method)() must be a string, found \(found)"
        case .notASnapshot(let method, let found): return "\(method)() needs a snapshot, found \(found)"
        case .parentOfRoot: return "parent() of the root"
        case .noProperty(let name, let found): return "cannot read property '\(name)' of \(found)"
        case .invalidIndex(let found): return "cannot index with \(found)"
        case .orderingTypes(let op, let left, let right):
            return "'\(op)' needs two numbers or two strings, found \(left) and \(right)"
        case .arithmeticTypes(let op, let left, let right):
            return op == "+"
                ? "'+' needs numbers or strings, found \(left) and \(right)"
                : "'\(op)' needs two numbers, found \(left) and \(right)"
        case .negateType(let found): return "unary '-' needs a number, found \(found)"
        case .notBoolean(let context, let found): return "\(context) needs a boolean, found \(found)"
        case .resultNotBoolean(let found): return "the rule evaluated to \(found), not a boolean"
        case .regexTooExpensive(let limit): return "regular expression matching exceeded \(limit) steps"
        }
    }
}
