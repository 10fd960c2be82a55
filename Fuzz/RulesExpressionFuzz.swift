// libFuzzer entry for the rules expression language; built by `scripts/fuzz RulesExpressionFuzz`, which compiles
// this file together with Sources/Primitives, Sources/DataModel and Sources/Rules as one module (so there are no
// `import DataModel`/`import Rules` here).
//
// Each input is (1) parsed as one rule expression, checked and compiled as a .read, .write and .validate rule
// below two wildcards, and — when it compiles — evaluated against a small fixed tree with and without auth; and
// (2) loaded as a whole rules file. Besides crashes, sanitizer reports and hangs, it traps when an error range
// falls outside the input, when a rules-file error names a line past the end, or when evaluating the same rule
// twice gives different outcomes.

/// Limits small enough that short inputs reach each of them.
private let fuzzOptions = RulesOptions(
    limits: RulesLimits(
        maxFileBytes: 4096, maxNesting: 16, maxExpressionBytes: 2048, maxExpressionDepth: 40, maxRegexInstructions: 500,
        maxRegexSteps: 20_000, maxErrors: 8))

/// A small tree with every kind of value, a priority and nesting, for `root`, `data` and `newData`.
private let fuzzTree: Node = {
    let json = #"{"a":{"b":{"c":1,"d":"text","e":true},"p":{".value":"x",".priority":2}},"users":{"alice":{"name":"Alice","n":-0.5}},"s":"a/b"}"#
    return (try? JSONReader.readData(Array(json.utf8)).node) ?? .empty
}()

private let fuzzAuth: JSONValue = .object([
    ("uid", .string("alice")), ("provider", .string("password")),
    ("token", .object([("admin", .bool(true)), ("email", .string("alice@example.com")), ("list", .array([.number(1), .string("x")]))])),
])

private let fuzzPath: [Key] = [Key(trusted: "a"), Key(trusted: "b")]

private func outcome(_ expression: CompiledExpression, _ context: EvaluationContext) -> String {
    do throws(EvaluationError) {
        return try context.evaluateRule(expression, source: SourceRange(0..<0)) ? "true" : "false"
    } catch {
        return "error " + error.message
    }
}

private func fuzzExpression(_ bytes: [UInt8]) {
    let syntax: ExpressionSyntax
    do throws(ExpressionError) {
        syntax = try ExpressionParser.parse(bytes, maxDepth: fuzzOptions.limits.maxExpressionDepth)
    } catch {
        if error.range.lowerBound < 0 || error.range.upperBound > bytes.count {
            fatalError("parser error range \(error.range) outside \(bytes.count) bytes")
        }
        return
    }
    let newRoot = fuzzTree.setting(Node(.string("new")), at: Path(keys: [Key(trusted: "a"), Key(trusted: "z")]))
    for kind in RuleKind.allCases {
        var checker = ExpressionChecker(kind: kind, captures: ["$x": 0, "$y": 1], options: fuzzOptions)
        let expression: CompiledExpression
        do throws(ExpressionError) {
            expression = try checker.compileRule(syntax)
        } catch {
            if error.range.lowerBound < 0 || error.range.upperBound > bytes.count {
                fatalError("checker error range \(error.range) outside \(bytes.count) bytes")
            }
            continue
        }
        for auth in [RuleValue.null, RuleValue(fuzzAuth)] {
            var context = EvaluationContext(
                auth: auth, now: 1_700_000_000_000, oldRoot: fuzzTree, newRoot: newRoot, query: .plain, path: fuzzPath,
                regexStepLimit: fuzzOptions.limits.maxRegexSteps)
            context.descend()
            context.descend()
            let first = outcome(expression, context)
            if first != outcome(expression, context) { fatalError("evaluation is not deterministic") }
        }
    }
}

private func fuzzRulesFile(_ bytes: [UInt8]) {
    do throws(RulesLoadError) {
        let rules = try RuleSet(source: bytes, fileName: "fuzz.json", options: fuzzOptions)
        let context = RulesContext(auth: fuzzAuth, root: fuzzTree, now: 0, explain: true)
        let path = Path(keys: fuzzPath)
        _ = rules.authorizeRead(at: path, query: nil, context: context)
        _ = rules.authorizeWrite(at: path, context: context, newRoot: fuzzTree.setting(.empty, at: path))
        _ = rules.authorizeUpdate(at: .root, changedPaths: [path], context: context, newRoot: fuzzTree)
        _ = rules.coverage
    } catch {
        let lines = bytes.reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) } + bytes.reduce(0) { $0 + ($1 == UInt8(ascii: "\r") ? 1 : 0) }
        for diagnostic in error.errors {
            if let position = diagnostic.position, position.line < 1 || position.line > lines || position.column < 1 {
                fatalError("diagnostic at \(position) outside the input (\(lines) lines)")
            }
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    fuzzExpression(bytes)
    fuzzRulesFile(bytes)
    return 0
}
