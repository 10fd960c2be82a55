import DataModel

/// Resolves names and checks types of a parsed rule expression at load time (security-rules.md §1.4, §5.6), and
/// produces the ``CompiledExpression`` evaluated per request.
///
/// Type checking is optimistic, as Firebase's: values known only at run time (`auth.*`, `val()`, query bounds) pass
/// here and are checked again during evaluation. Constructs Firebase rejects at deploy time are errors: unknown
/// variables and members, wrong argument counts or literal argument types, comparisons of snapshots, ordering with
/// a boolean, regular expressions outside `matches()`, array literals outside `hasChildren()`, and rules or operands
/// of `!`, `&&`, `||` and `?:` that are statically not boolean. Operands whose type is unknown until run time are
/// accepted with a warning — or rejected, as targaryen does, when ``RulesOptions/strictBooleanOperands`` is set.
struct ExpressionChecker {
    /// What the checker knows about a value's type before evaluation.
    enum StaticType: Hashable {
        case boolean, number, string, null, snapshot, query, regex, array
        /// A value read from data (`val()`, `getPriority()`) or a query bound: a primitive, null, or (for `val()`)
        /// the opaque object value.
        case unknown
        /// `auth` or something inside it: an object, array, primitive or null.
        case authValue
        /// The result of `?:` with branches of different plain types, at least one known not to be boolean: usable
        /// as a value, never as a boolean.
        case mixed

        var name: String {
            switch self {
            case .boolean: return "a boolean"
            case .number: return "a number"
            case .string: return "a string"
            case .null: return "null"
            case .snapshot: return "a snapshot"
            case .query: return "the query object"
            case .regex: return "a regular expression"
            case .array: return "an array"
            case .unknown: return "a value known only at run time"
            case .authValue: return "an auth value"
            case .mixed: return "a value of mixed type"
            }
        }

        /// Types that may be used where a string is required (checked again at run time).
        var mayBeString: Bool { self == .string || self == .unknown || self == .authValue || self == .mixed }
        /// Types that are not plain values: they can only be receivers or arguments.
        var isStructural: Bool { self == .snapshot || self == .query || self == .regex || self == .array }
    }

    /// A checked subexpression.
    struct Typed {
        var expression: CompiledExpression
        var type: StaticType
    }

    let kind: RuleKind
    /// `$name` → depth of the path key it captures.
    let captures: [String: Int]
    let options: RulesOptions
    /// Suspicious but valid constructs, reported as warnings.
    var warnings: [ExpressionError] = []

    init(kind: RuleKind, captures: [String: Int], options: RulesOptions) {
        self.kind = kind
        self.captures = captures
        self.options = options
    }

    /// Checks a whole rule, which must be boolean.
    mutating func compileRule(_ syntax: ExpressionSyntax) throws(ExpressionError) -> CompiledExpression {
        let typed = try check(syntax)
        try requireBoolean(typed, syntax, "a rule")
        return typed.expression
    }

    /// Whether a boolean is required and the type allows it; unknown types warn (or fail in strict mode).
    mutating func requireBoolean(_ typed: Typed, _ syntax: ExpressionSyntax, _ context: String) throws(ExpressionError) {
        switch typed.type {
        case .boolean:
            return
        case .unknown, .authValue:
            if options.strictBooleanOperands {
                throw ExpressionError(
                    syntax.range, "\(context) must be boolean, but this is \(typed.type.name) (compare it, e.g. == true)")
            }
            warnings.append(
                ExpressionError(
                    syntax.range,
                    "\(context) should be boolean, but this is \(typed.type.name); a non-boolean value makes the rule fail — compare explicitly (== true)"
                ))
        default:
            throw ExpressionError(syntax.range, "\(context) must be boolean, but this is \(typed.type.name)")
        }
    }

    mutating func check(_ syntax: ExpressionSyntax) throws(ExpressionError) -> Typed {
        let source = SourceRange(syntax.range)
        switch syntax.kind {
        case .literal(let literal):
            switch literal {
            case .null: return Typed(expression: .constant(.null), type: .null)
            case .bool(let flag): return Typed(expression: .constant(.bool(flag)), type: .boolean)
            case .number(let number): return Typed(expression: .constant(.number(number)), type: .number)
            case .string(let text): return Typed(expression: .constant(.string(text)), type: .string)
            }
        case .identifier(let name):
            return try identifier(name, syntax)
        case .member(let receiver, let name, _):
            return try property(name, of: check(receiver), receiverSyntax: receiver, syntax: syntax)
        case .subscripted(let receiver, let index):
            let receiverTyped = try check(receiver)
            if receiverTyped.type == .authValue {
                let indexTyped = try check(index)
                guard !indexTyped.type.isStructural, indexTyped.type != .boolean, indexTyped.type != .null else {
                    throw ExpressionError(index.range, "an index must be a string or a number, not \(indexTyped.type.name)")
                }
                return Typed(expression: .element(receiverTyped.expression, index: indexTyped.expression, source: source), type: .authValue)
            }
            guard case .literal(.string(let name)) = index.kind else {
                throw ExpressionError(
                    index.range, "members of \(receiverTyped.type.name) can only be named by a string literal, as in x['name']")
            }
            return try property(name, of: receiverTyped, receiverSyntax: receiver, syntax: syntax)
        case .call(let callee, let arguments):
            return try call(callee, arguments, syntax)
        case .unary(.not, let operand):
            let typed = try check(operand)
            try requireBoolean(typed, operand, "the operand of '!'")
            return Typed(expression: .not(typed.expression, source: source), type: .boolean)
        case .unary(.negate, let operand):
            let typed = try check(operand)
            try requireValue(typed, operand, "the operand of unary '-'")
            if case .constant(.number(let number)) = typed.expression {
                return Typed(expression: .constant(.number(-number)), type: .number)
            }
            return Typed(expression: .negate(typed.expression, source: source), type: .number)
        case .binary(let op, let left, let right):
            return try binary(op, left, right, source: source)
        case .logical(let op, let operands):
            var compiled: [CompiledExpression] = []
            for operand in operands {
                let typed = try check(operand)
                try requireBoolean(typed, operand, "an operand of '\(op.rawValue)'")
                compiled.append(typed.expression)
            }
            let expression: CompiledExpression = op == .and ? .and(compiled, source: source) : .or(compiled, source: source)
            return Typed(expression: expression, type: .boolean)
        case .conditional(let condition, let then, let otherwise):
            let conditionTyped = try check(condition)
            try requireBoolean(conditionTyped, condition, "the condition of '?:'")
            let thenTyped = try check(then)
            let otherwiseTyped = try check(otherwise)
            let type: StaticType
            if thenTyped.type == otherwiseTyped.type && thenTyped.type != .query && thenTyped.type != .regex
                && thenTyped.type != .array
            {
                type = thenTyped.type
            } else if thenTyped.type.isStructural || otherwiseTyped.type.isStructural {
                throw ExpressionError(
                    syntax.range,
                    "the branches of '?:' must both be plain values or both snapshots, found \(thenTyped.type.name) and \(otherwiseTyped.type.name)")
            } else {
                let plain: Set<StaticType> = [.number, .string, .null, .mixed]
                type = plain.contains(thenTyped.type) || plain.contains(otherwiseTyped.type) ? .mixed : .unknown
            }
            return Typed(
                expression: .conditional(conditionTyped.expression, thenTyped.expression, otherwiseTyped.expression, source: source),
                type: type)
        case .array:
            throw ExpressionError(syntax.range, "array literals are only allowed as the argument of hasChildren()")
        case .regex:
            throw ExpressionError(syntax.range, "regular expressions are only allowed as the argument of matches()")
        }
    }

    // MARK: - Names

    private func identifier(_ name: String, _ syntax: ExpressionSyntax) throws(ExpressionError) -> Typed {
        switch name {
        case "auth": return Typed(expression: .variable(.auth), type: .authValue)
        case "now": return Typed(expression: .variable(.now), type: .number)
        case "root": return Typed(expression: .variable(.root), type: .snapshot)
        case "data": return Typed(expression: .variable(.data), type: .snapshot)
        case "newData":
            guard kind != .read else {
                throw ExpressionError(syntax.range, "newData is not available in .read rules (there is no new data)")
            }
            return Typed(expression: .variable(.newData), type: .snapshot)
        case "query":
            // A placeholder: the query object has no value of its own; only its fields can be used.
            return Typed(expression: .constant(.null), type: .query)
        default:
            if name.hasPrefix("$") {
                guard let depth = captures[name] else {
                    throw ExpressionError(
                        syntax.range, "unknown variable '\(name)': no enclosing '\(name)' location captures it")
                }
                return Typed(expression: .capture(depth: depth), type: .string)
            }
            throw ExpressionError(
                syntax.range, "unknown variable '\(name)' (rules have auth, now, root, data, newData, query and $wildcards)")
        }
    }

    /// `receiver.name` that is not called.
    private func property(_ name: String, of receiver: Typed, receiverSyntax: ExpressionSyntax, syntax: ExpressionSyntax)
        throws(ExpressionError) -> Typed
    {
        let source = SourceRange(syntax.range)
        switch receiver.type {
        case .authValue:
            return Typed(expression: .property(receiver.expression, name: name, source: source), type: .authValue)
        case .query:
            guard let field = RuleQuery.Field(rawValue: name) else {
                throw ExpressionError(
                    syntax.range,
                    "the query object has no field '\(name)' (it has \(RuleQuery.Field.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            let type: StaticType
            switch field {
            case .orderByKey, .orderByPriority, .orderByValue: type = .boolean
            default: type = .unknown
            }
            return Typed(expression: .queryField(field), type: type)
        case .snapshot:
            if CompiledExpression.SnapshotMethod(rawValue: name) != nil || Self.snapshotMethodsWithArguments.contains(name) {
                throw ExpressionError(syntax.range, "'\(name)' is a method of snapshots: call it as \(name)(…)")
            }
            throw ExpressionError(
                syntax.range, "snapshots have no property '\(name)' (to read a child use child('\(name)'))")
        case .string, .unknown, .mixed:
            if name == "length" {
                return Typed(expression: .length(receiver.expression, source: source), type: .number)
            }
            if Self.stringMethods.contains(name) {
                throw ExpressionError(syntax.range, "'\(name)' is a method of strings: call it as \(name)(…)")
            }
            throw ExpressionError(syntax.range, "\(receiver.type.name) has no property '\(name)'")
        default:
            throw ExpressionError(syntax.range, "\(receiver.type.name) has no property '\(name)'")
        }
    }

    static let snapshotMethodsWithArguments: Set<String> = ["child", "hasChild", "hasChildren"]
    static let stringMethods: Set<String> = [
        "contains", "beginsWith", "endsWith", "replace", "toLowerCase", "toUpperCase", "matches",
    ]

    // MARK: - Operators

    /// Requires a plain value (not a snapshot, the query object, a regular expression or an array).
    private func requireValue(_ typed: Typed, _ syntax: ExpressionSyntax, _ context: String) throws(ExpressionError) {
        guard !typed.type.isStructural else {
            let hint = typed.type == .snapshot ? " (use val() or exists())" : ""
            throw ExpressionError(syntax.range, "\(context) cannot be \(typed.type.name)\(hint)")
        }
    }

    private mutating func binary(
        _ op: ExpressionSyntax.BinaryOperator, _ left: ExpressionSyntax, _ right: ExpressionSyntax, source: SourceRange
    ) throws(ExpressionError) -> Typed {
        let leftTyped = try check(left)
        let rightTyped = try check(right)
        let context = "an operand of '\(op.rawValue)'"
        try requireValue(leftTyped, left, context)
        try requireValue(rightTyped, right, context)
        switch op {
        case .equal, .notEqual:
            return Typed(
                expression: .equal(leftTyped.expression, rightTyped.expression, negated: op == .notEqual), type: .boolean)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            for (typed, syntax) in [(leftTyped, left), (rightTyped, right)] where typed.type == .boolean {
                throw ExpressionError(syntax.range, "'\(op.rawValue)' cannot compare booleans")
            }
            let ordering: CompiledExpression.Ordering
            switch op {
            case .less: ordering = .less
            case .lessOrEqual: ordering = .lessOrEqual
            case .greater: ordering = .greater
            default: ordering = .greaterOrEqual
            }
            return Typed(expression: .ordering(ordering, leftTyped.expression, rightTyped.expression, source: source), type: .boolean)
        case .add, .subtract, .multiply, .divide, .remainder:
            let arithmetic: CompiledExpression.Arithmetic
            switch op {
            case .add: arithmetic = .add
            case .subtract: arithmetic = .subtract
            case .multiply: arithmetic = .multiply
            case .divide: arithmetic = .divide
            default: arithmetic = .remainder
            }
            let type: StaticType
            if op != .add || (leftTyped.type == .number && rightTyped.type == .number) {
                type = .number
            } else if leftTyped.type == .string || rightTyped.type == .string {
                type = .string
            } else {
                type = .unknown
            }
            return Typed(
                expression: .arithmetic(arithmetic, leftTyped.expression, rightTyped.expression, source: source), type: type)
        }
    }
}
