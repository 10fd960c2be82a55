import DataModel

extension ExpressionChecker {
    /// `receiver.name(arguments)` or `receiver['name'](arguments)`: snapshot methods and string methods (§6); nothing
    /// else can be called.
    mutating func call(_ callee: ExpressionSyntax, _ arguments: [ExpressionSyntax], _ syntax: ExpressionSyntax)
        throws(ExpressionError) -> Typed
    {
        let receiverSyntax: ExpressionSyntax
        let name: String
        switch callee.kind {
        case .member(let receiver, let member, _):
            receiverSyntax = receiver
            name = member
        case .subscripted(let receiver, let index):
            guard case .literal(.string(let member)) = index.kind else {
                throw ExpressionError(index.range, "a called member must be named by a string literal, as in x['exists']()")
            }
            receiverSyntax = receiver
            name = member
        default:
            throw ExpressionError(callee.range, "only methods of snapshots and strings can be called")
        }
        let receiver = try check(receiverSyntax)
        let source = SourceRange(syntax.range)
        switch receiver.type {
        case .snapshot:
            return try snapshotCall(receiver.expression, name, arguments, syntax, source)
        case .string, .unknown, .authValue, .mixed:
            guard Self.stringMethods.contains(name) else {
                if name == "length" {
                    throw ExpressionError(callee.range, "length is a property of strings, not a method: write .length")
                }
                throw ExpressionError(callee.range, "'\(name)' is not a string method")
            }
            return try stringCall(receiver.expression, name, arguments, syntax, source)
        default:
            throw ExpressionError(callee.range, "\(receiver.type.name) has no method '\(name)'")
        }
    }

    private func expectArguments(_ arguments: [ExpressionSyntax], _ count: Int, _ name: String, _ syntax: ExpressionSyntax)
        throws(ExpressionError)
    {
        guard arguments.count == count else {
            let expected = count == 0 ? "no arguments" : count == 1 ? "1 argument" : "\(count) arguments"
            throw ExpressionError(syntax.range, "\(name)() takes \(expected), not \(arguments.count)")
        }
    }

    private mutating func snapshotCall(
        _ receiver: CompiledExpression, _ name: String, _ arguments: [ExpressionSyntax], _ syntax: ExpressionSyntax,
        _ source: SourceRange
    ) throws(ExpressionError) -> Typed {
        switch name {
        case "child":
            try expectArguments(arguments, 1, name, syntax)
            return Typed(expression: .child(receiver, try pathArgument(arguments[0], name), source: source), type: .snapshot)
        case "hasChild":
            try expectArguments(arguments, 1, name, syntax)
            return Typed(expression: .hasChild(receiver, try pathArgument(arguments[0], name), source: source), type: .boolean)
        case "hasChildren" where !arguments.isEmpty:
            try expectArguments(arguments, 1, name, syntax)
            guard case .array(let elements) = arguments[0].kind else {
                throw ExpressionError(arguments[0].range, "hasChildren() takes an array literal of paths, as in hasChildren(['a', 'b'])")
            }
            guard !elements.isEmpty else {
                throw ExpressionError(arguments[0].range, "hasChildren([]) needs at least one path")
            }
            var paths: [CompiledExpression.PathArgument] = []
            for element in elements { paths.append(try pathArgument(element, name)) }
            return Typed(expression: .hasChildrenNamed(receiver, paths, source: source), type: .boolean)
        default:
            guard let method = SnapshotMethod(rawValue: name) else {
                throw ExpressionError(syntax.range, "snapshots have no method '\(name)'")
            }
            try expectArguments(arguments, 0, name, syntax)
            let type: StaticType
            switch method {
            case .val, .getPriority: type = .unknown
            case .parent: type = .snapshot
            case .exists, .isNumber, .isString, .isBoolean, .hasChildren: type = .boolean
            }
            return Typed(expression: .snapshotMethod(receiver, method, source: source), type: type)
        }
    }

    typealias SnapshotMethod = CompiledExpression.SnapshotMethod

    /// A path argument: literal strings are split and validated now; other expressions must be able to be strings.
    private mutating func pathArgument(_ syntax: ExpressionSyntax, _ method: String) throws(ExpressionError)
        -> CompiledExpression.PathArgument
    {
        if case .literal(.string(let text)) = syntax.kind {
            return .keys(EvaluationContext.pathKeys(text))
        }
        if let template = try pathTemplate(syntax) { return template }
        let typed = try check(syntax)
        guard typed.type.mayBeString else {
            throw ExpressionError(syntax.range, "the path argument of \(method)() must be a string, not \(typed.type.name)")
        }
        return .computed(typed.expression)
    }

    /// A `'literal' + … + …` chain as a path template, or nil for any other expression.
    private mutating func pathTemplate(_ syntax: ExpressionSyntax) throws(ExpressionError) -> CompiledExpression.PathArgument? {
        var operands: [(syntax: ExpressionSyntax, plus: ExpressionSyntax)] = []
        var node = syntax
        while case .binary(.add, let left, let right) = node.kind {
            operands.append((right, node))
            node = left
        }
        guard !operands.isEmpty, case .literal(.string(let first)) = node.kind else { return nil }
        var pieces: [CompiledExpression.PathPiece] = [.text(CompiledExpression.PathText(first))]
        for (operand, plus) in operands.reversed() {
            if case .literal(.string(let text)) = operand.kind {
                pieces.append(.text(CompiledExpression.PathText(text)))
                continue
            }
            let typed = try check(operand)
            guard !typed.type.isStructural else {
                throw ExpressionError(operand.range, "an operand of '+' cannot be \(typed.type.name)")
            }
            if case .capture(let depth) = typed.expression {
                pieces.append(.capture(depth: depth))
            } else {
                pieces.append(.value(typed.expression, source: SourceRange(plus.range)))
            }
        }
        return .template(pieces)
    }

    private mutating func stringCall(
        _ receiver: CompiledExpression, _ name: String, _ arguments: [ExpressionSyntax], _ syntax: ExpressionSyntax,
        _ source: SourceRange
    ) throws(ExpressionError) -> Typed {
        if name == "matches" {
            try expectArguments(arguments, 1, name, syntax)
            guard case .regex(let pattern, let flags) = arguments[0].kind else {
                throw ExpressionError(
                    arguments[0].range, "matches() takes a regular-expression literal such as /^[a-z]+$/, not \(describe(arguments[0]))")
            }
            let program: RegexProgram
            do {
                program = try RegexParser.compile(
                    pattern: pattern, flags: flags, maxInstructions: options.limits.maxRegexInstructions)
            } catch {
                let offset = arguments[0].range.lowerBound + 1 + error.offset
                throw ExpressionError(min(offset, arguments[0].range.upperBound)..<arguments[0].range.upperBound, error.message)
            }
            if !program.anchoredStart && !program.anchoredEnd {
                warnings.append(
                    ExpressionError(
                        arguments[0].range,
                        "matches() searches anywhere in the string; anchor the pattern with ^ and $ to match the whole string"))
            }
            return Typed(expression: .matches(receiver, program, source: source), type: .boolean)
        }
        guard let method = CompiledExpression.StringMethod(rawValue: name) else {
            throw ExpressionError(syntax.range, "'\(name)' is not a string method")
        }
        let count: Int
        let type: StaticType
        switch method {
        case .contains, .beginsWith, .endsWith: (count, type) = (1, .boolean)
        case .replace: (count, type) = (2, .string)
        case .toLowerCase, .toUpperCase: (count, type) = (0, .string)
        }
        try expectArguments(arguments, count, name, syntax)
        var compiled: [CompiledExpression] = []
        for argument in arguments {
            let typed = try check(argument)
            guard typed.type.mayBeString else {
                throw ExpressionError(argument.range, "the arguments of \(name)() must be strings, not \(typed.type.name)")
            }
            compiled.append(typed.expression)
        }
        return Typed(expression: .stringMethod(receiver, method, compiled, source: source), type: type)
    }

    private func describe(_ syntax: ExpressionSyntax) -> String {
        switch syntax.kind {
        case .literal(.string): return "a string"
        case .literal(.number): return "a number"
        default: return "this expression"
        }
    }
}
