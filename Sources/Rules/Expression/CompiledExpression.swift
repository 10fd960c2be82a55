import DataModel

/// A rule expression after parsing, name resolution and type checking: a tree evaluated directly by
/// ``EvaluationContext/evaluate(_:)``, built once at load and never re-parsed.
///
/// Literal arguments are prepared at load time: `child('a/b')` holds validated keys, regular expressions are
/// compiled programs, `$wildcard` references are indices into the evaluation path. Nodes that can fail at run time
/// keep the byte range of their source text, so an error names the part of the rule that failed.
indirect enum CompiledExpression: Sendable {
    /// Variables.
    enum Variable: Sendable {
        case auth, now, root, data, newData
    }

    /// Snapshot methods without arguments.
    enum SnapshotMethod: String, Sendable {
        case val, exists, parent, getPriority, isNumber, isString, isBoolean, hasChildren
    }

    /// String methods with string arguments (`matches` and `length` have their own nodes).
    enum StringMethod: String, Sendable {
        case contains, beginsWith, endsWith, replace, toLowerCase, toUpperCase
    }

    /// A path argument of `child`, `hasChild` or `hasChildren`.
    enum PathArgument: Sendable {
        /// A literal path, split at load.
        case keys([Key])
        /// Computed at run time; must be a string.
        case computed(CompiledExpression)
        /// A concatenation that starts with a string literal, such as `'rooms/' + $room + '/members/' + auth.uid`:
        /// the keys are assembled piece by piece, with the literal parts split at load, instead of building the
        /// whole string and splitting it again. Every `+` of such a chain concatenates, so the result is the same.
        case template([PathPiece])
    }

    /// One operand of a ``PathArgument/template(_:)``.
    enum PathPiece: Sendable {
        /// Literal text, split at `/` at load.
        case text(PathText)
        /// A `$wildcard`: its key is used as it is.
        case capture(depth: Int)
        /// Any other operand; a string, or a number written as JavaScript prints it. `source` is the `+`
        /// expression it belongs to, for errors.
        case value(CompiledExpression, source: SourceRange)
    }

    /// Literal text of a path template, split at `/`: `head` continues the segment before it, `inner` are whole
    /// segments, `tail` starts the next one (when the text has a slash). A class, so that evaluating a template
    /// copies one reference per piece instead of five.
    final class PathText: Sendable {
        let head: String
        let inner: [Key]
        let tail: String
        let hasSlash: Bool
        /// `head` and `tail` as keys, for when they make up a whole segment (nil when empty).
        let headKey: Key?
        let tailKey: Key?

        init(_ text: String) {
            let parts = text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
            head = parts.first ?? ""
            hasSlash = parts.count > 1
            tail = hasSlash ? parts.last ?? "" : ""
            inner = hasSlash ? parts.dropFirst().dropLast().filter { !$0.isEmpty }.map { Key(trusted: $0) } : []
            headKey = head.isEmpty ? nil : Key(trusted: head)
            tailKey = tail.isEmpty ? nil : Key(trusted: tail)
        }
    }

    enum Arithmetic: String, Sendable {
        case add = "+", subtract = "-", multiply = "*", divide = "/", remainder = "%"
    }

    enum Ordering: String, Sendable {
        case less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    }

    case constant(RuleValue)
    case variable(Variable)
    /// The path key matched by the wildcard at this depth (`$room`): always a string.
    case capture(depth: Int)
    case queryField(RuleQuery.Field)
    /// `value.name` on a value whose type is known only at run time (`auth.token.admin`): a member of an object,
    /// `null` on null, `length` of a string; anything else fails.
    case property(CompiledExpression, name: String, source: SourceRange)
    /// `value[index]` on such a value (`auth.token[$claim]`).
    case element(CompiledExpression, index: CompiledExpression, source: SourceRange)
    /// `text.length` in UTF-16 code units.
    case length(CompiledExpression, source: SourceRange)
    case snapshotMethod(CompiledExpression, SnapshotMethod, source: SourceRange)
    case child(CompiledExpression, PathArgument, source: SourceRange)
    case hasChild(CompiledExpression, PathArgument, source: SourceRange)
    case hasChildrenNamed(CompiledExpression, [PathArgument], source: SourceRange)
    case stringMethod(CompiledExpression, StringMethod, [CompiledExpression], source: SourceRange)
    case matches(CompiledExpression, RegexProgram, source: SourceRange)
    case not(CompiledExpression, source: SourceRange)
    case negate(CompiledExpression, source: SourceRange)
    case arithmetic(Arithmetic, CompiledExpression, CompiledExpression, source: SourceRange)
    case ordering(Ordering, CompiledExpression, CompiledExpression, source: SourceRange)
    case equal(CompiledExpression, CompiledExpression, negated: Bool)
    case and([CompiledExpression], source: SourceRange)
    case or([CompiledExpression], source: SourceRange)
    case conditional(CompiledExpression, CompiledExpression, CompiledExpression, source: SourceRange)
}

/// A byte range of an expression's text, stored compactly in compiled nodes.
struct SourceRange: Sendable, Equatable {
    var start: Int32
    var end: Int32

    init(_ range: Range<Int>) {
        start = Int32(clamping: range.lowerBound)
        end = Int32(clamping: range.upperBound)
    }

    var range: Range<Int> { Int(start)..<Int(max(start, end)) }
}
