import DataModel

extension EvaluationContext {
    /// String methods (security-rules.md §6): the receiver and every argument must be strings at run time.
    func stringMethod(
        _ method: CompiledExpression.StringMethod, receiver: CompiledExpression, arguments: [CompiledExpression],
        source: SourceRange
    ) throws(EvaluationError) -> RuleValue {
        let value = try evaluate(receiver)
        guard case .string(let text) = value else {
            throw EvaluationError(.notAString(member: method.rawValue, found: value.typeName), source)
        }
        var strings: [String] = []
        for argument in arguments {
            let argumentValue = try evaluate(argument)
            guard case .string(let string) = argumentValue else {
                throw EvaluationError(.argumentNotAString(method: method.rawValue, found: argumentValue.typeName), source)
            }
            strings.append(string)
        }
        switch method {
        case .contains: return .bool(StringBytes.contains(text, strings[0]))
        case .beginsWith: return .bool(StringBytes.hasPrefix(text, strings[0]))
        case .endsWith: return .bool(StringBytes.hasSuffix(text, strings[0]))
        case .replace: return .string(StringBytes.replacingAll(text, strings[0], with: strings[1]))
        case .toLowerCase: return .string(text.lowercased())
        case .toUpperCase: return .string(text.uppercased())
        }
    }

    /// `+ - * / %` (§5.4): numbers with numbers; `+` also concatenates when either side is a string and the other a
    /// string or number. Division by zero is NaN, as Firebase evaluates it (not JavaScript's Infinity).
    func arithmetic(_ op: CompiledExpression.Arithmetic, _ left: RuleValue, _ right: RuleValue, source: SourceRange)
        throws(EvaluationError) -> RuleValue
    {
        switch (op, left, right) {
        case (.add, .number(let x), .number(let y)): return .number(x + y)
        case (.add, .string(let x), .string(let y)): return .string(x + y)
        case (.add, .string(let x), .number(let y)): return .string(x + Self.format(y))
        case (.add, .number(let x), .string(let y)): return .string(Self.format(x) + y)
        case (.subtract, .number(let x), .number(let y)): return .number(x - y)
        case (.multiply, .number(let x), .number(let y)): return .number(x * y)
        case (.divide, .number(let x), .number(let y)): return .number(y == 0 ? .nan : x / y)
        case (.remainder, .number(let x), .number(let y)): return .number(x.truncatingRemainder(dividingBy: y))
        default:
            throw EvaluationError(
                .arithmeticTypes(operator: op.rawValue, left: left.typeName, right: right.typeName), source)
        }
    }

    /// `< <= > >=` (§5.4): two numbers (anything with NaN is false) or two strings in code-unit order.
    func ordering(_ op: CompiledExpression.Ordering, _ left: RuleValue, _ right: RuleValue, source: SourceRange)
        throws(EvaluationError) -> RuleValue
    {
        switch (left, right) {
        case (.number(let x), .number(let y)):
            switch op {
            case .less: return .bool(x < y)
            case .lessOrEqual: return .bool(x <= y)
            case .greater: return .bool(x > y)
            case .greaterOrEqual: return .bool(x >= y)
            }
        case (.string(let x), .string(let y)):
            let order = StringBytes.compare(x, y)
            switch op {
            case .less: return .bool(order < 0)
            case .lessOrEqual: return .bool(order <= 0)
            case .greater: return .bool(order > 0)
            case .greaterOrEqual: return .bool(order >= 0)
            }
        default:
            throw EvaluationError(.orderingTypes(operator: op.rawValue, left: left.typeName, right: right.typeName), source)
        }
    }

    /// A number as JavaScript's `String(n)` prints it (`NaN`, `Infinity` included).
    static func format(_ number: Double) -> String {
        if number.isNaN { return "NaN" }
        if number.isInfinite { return number < 0 ? "-Infinity" : "Infinity" }
        return JSONNumberFormatter.string(number)
    }
}
