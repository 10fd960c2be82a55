import DataModel

/// Turns a rules file into a checked, compiled rules tree (security-rules.md §1): reads the document, checks its
/// structure, compiles every expression, and collects every error (up to the limit) and warning with file
/// positions and rule paths. A single error rejects the whole file.
struct RuleTreeBuilder {
    /// What a successful build produces.
    struct Result {
        var root: RuleNode
        var rules: [CompiledRule]
        var indexes: [RulesIndexDeclaration]
        var warnings: [RulesDiagnostic]
    }

    private let fileName: String
    private let lines: LineIndex
    private let options: RulesOptions
    private var errors: [RulesDiagnostic] = []
    private var warnings: [RulesDiagnostic] = []
    private var rules: [CompiledRule] = []
    private var indexes: [RulesIndexDeclaration] = []

    /// Builds the rules tree from a file's bytes.
    static func build(source: [UInt8], fileName: String, options: RulesOptions) throws(RulesLoadError) -> Result {
        guard source.count <= options.limits.maxFileBytes else {
            throw RulesLoadError(errors: [
                RulesDiagnostic(
                    severity: .error, file: fileName, position: nil, rulePath: "",
                    message: "the rules file is \(source.count) bytes, more than the limit of \(options.limits.maxFileBytes)")
            ])
        }
        var builder = RuleTreeBuilder(fileName: fileName, lines: LineIndex(source), options: options)
        let document: RulesDocumentValue
        do {
            document = try RulesDocumentReader.read(source, maxNesting: options.limits.maxNesting)
        } catch {
            var message = error.message
            if let related = error.relatedOffset { message += " (first at \(builder.lines.position(of: related)))" }
            builder.error(at: error.offset, Self.rulePath(fromKeys: error.keyPath), message)
            throw RulesLoadError(errors: builder.errors)
        }
        let root = builder.buildDocument(document)
        guard builder.errors.isEmpty, let root else {
            throw RulesLoadError(errors: builder.errors, warnings: builder.warnings)
        }
        let rules = builder.rules.sorted { $0.position < $1.position }
        return Result(root: root, rules: rules, indexes: builder.indexes, warnings: builder.warnings)
    }

    private init(fileName: String, lines: LineIndex, options: RulesOptions) {
        self.fileName = fileName
        self.lines = lines
        self.options = options
    }

    /// `["rules", "rooms", "$room", ".write"]` → `/rooms/$room/.write`; empty outside `rules`.
    private static func rulePath(fromKeys keys: [String]) -> String {
        guard keys.first == "rules" else { return "" }
        return "/" + keys.dropFirst().joined(separator: "/")
    }

    // MARK: - Diagnostics

    private mutating func error(at offset: Int, _ rulePath: String, _ message: String) {
        guard errors.count < options.limits.maxErrors else { return }
        errors.append(
            RulesDiagnostic(severity: .error, file: fileName, position: lines.position(of: offset), rulePath: rulePath, message: message))
        if errors.count == options.limits.maxErrors {
            errors.append(
                RulesDiagnostic(
                    severity: .error, file: fileName, position: nil, rulePath: "",
                    message: "too many errors; stopping after \(options.limits.maxErrors)"))
        }
    }

    private mutating func warning(at offset: Int, _ rulePath: String, _ message: String) {
        warning(at: lines.position(of: offset), rulePath, message)
    }

    private mutating func warning(at position: SourcePosition, _ rulePath: String, _ message: String) {
        warnings.append(
            RulesDiagnostic(severity: .warning, file: fileName, position: position, rulePath: rulePath, message: message))
    }

    // MARK: - Structure

    private mutating func buildDocument(_ document: RulesDocumentValue) -> RuleNode? {
        guard case .object(let members) = document.kind else {
            error(at: document.offset, "", "a rules file must be an object {\"rules\": {…}}, not \(document.typeName)")
            return nil
        }
        var rulesValue: RulesDocumentValue?
        for member in members {
            if member.key == "rules" {
                rulesValue = member.value
            } else {
                error(at: member.keyOffset, "", "unexpected top-level key \"\(member.key)\" (only \"rules\" is allowed)")
            }
        }
        guard let rulesValue else {
            error(at: document.offset, "", "the rules file has no \"rules\" object")
            return nil
        }
        guard case .object = rulesValue.kind else {
            error(at: rulesValue.offset, "/", "\"rules\" must be an object, not \(rulesValue.typeName)")
            return nil
        }
        return buildNode(rulesValue, segments: [], captures: [:], openRead: nil, openWrite: nil)
    }

    /// Location text for rules-tree segments: `/` or `/a/$b`.
    private func location(_ segments: [String]) -> String {
        segments.isEmpty ? "/" : "/" + segments.joined(separator: "/")
    }

    private func rulePath(_ segments: [String], _ key: String) -> String {
        segments.isEmpty ? "/" + key : location(segments) + "/" + key
    }

    /// Builds one rule node. `openRead`/`openWrite` name an ancestor (or this node, for `.validate`) whose rule is
    /// literally `true`, for warnings about rules that cannot have the effect their author expects.
    private mutating func buildNode(
        _ value: RulesDocumentValue, segments: [String], captures: [String: Int], openRead: String?, openWrite: String?
    ) -> RuleNode? {
        guard case .object(let members) = value.kind else { return nil }
        let depth = segments.count
        var read: CompiledRule?
        var write: CompiledRule?
        var validate: CompiledRule?
        var indexOn: [String] = []
        var childMembers: [RulesDocumentValue.Member] = []
        var wildcard: RulesDocumentValue.Member?
        for member in members {
            switch member.key {
            case ".read":
                read = compileRule(.read, member, segments, captures)
            case ".write":
                write = compileRule(.write, member, segments, captures)
            case ".validate":
                validate = compileRule(.validate, member, segments, captures)
            case ".indexOn":
                indexOn = readIndexOn(member, segments)
            default:
                if member.key.hasPrefix(".") {
                    error(
                        at: member.keyOffset, rulePath(segments, member.key),
                        "unknown rule type \"\(member.key)\" (rules have .read, .write, .validate and .indexOn)")
                } else if member.key.hasPrefix("$") {
                    if let existing = wildcard {
                        error(
                            at: member.keyOffset, rulePath(segments, member.key),
                            "only one $wildcard per location, and \(existing.key) is already here")
                    } else {
                        wildcard = member
                    }
                } else {
                    childMembers.append(member)
                }
            }
        }
        for (rule, open, kind) in [(read, openRead, "read"), (write, openWrite, "write")] {
            if let rule, let open {
                warning(
                    at: rule.position, rule.rulePath,
                    "this .\(kind) rule cannot restrict anything: \(open) already grants .\(kind) to everyone, and deeper rules cannot revoke a grant")
            }
        }
        let writeOpenHere = openWrite ?? (write?.isAlwaysTrue == true ? write?.rulePath : nil)
        let readOpenHere = openRead ?? (read?.isAlwaysTrue == true ? read?.rulePath : nil)
        if depth == 0 {
            if let read, read.isAlwaysTrue {
                warning(at: read.position, read.rulePath, "everyone, signed in or not, may read the whole database")
            }
            if let write, write.isAlwaysTrue {
                warning(at: write.position, write.rulePath, "everyone, signed in or not, may write the whole database")
            }
        }
        if let validate, let open = writeOpenHere, !validate.isAlwaysFalse {
            warning(
                at: validate.position, validate.rulePath,
                ".validate does not run on deletes, and \(open) grants .write to everyone: anyone can delete this data")
        }

        var literalChildren: [(key: Key, node: RuleNode)] = []
        for member in childMembers {
            let path = rulePath(segments, member.key)
            guard let key = try? Key(member.key) else {
                error(
                    at: member.keyOffset, path,
                    "\"\(member.key)\" is not a valid key (keys may not contain . # $ [ ] / or control characters)")
                continue
            }
            guard case .object = member.value.kind else {
                error(at: member.value.offset, path, "the rules for \"\(member.key)\" must be an object, not \(member.value.typeName)")
                continue
            }
            if let child = buildNode(
                member.value, segments: segments + [member.key], captures: captures, openRead: readOpenHere,
                openWrite: writeOpenHere)
            {
                literalChildren.append((key, child))
            }
        }
        var wildcardNode: RuleNode?
        if let member = wildcard {
            let path = rulePath(segments, member.key)
            let name = String(member.key.dropFirst())
            if name.isEmpty || (try? Key(name)) == nil {
                error(at: member.keyOffset, path, "\"\(member.key)\" is not a valid wildcard name")
            } else if captures[member.key] != nil {
                error(at: member.keyOffset, path, "\(member.key) is already captured by an enclosing location")
            } else if case .object = member.value.kind {
                var inner = captures
                inner[member.key] = depth
                wildcardNode = buildNode(
                    member.value, segments: segments + [member.key], captures: inner, openRead: readOpenHere,
                    openWrite: writeOpenHere)
            } else {
                error(at: member.value.offset, path, "the rules for \(member.key) must be an object, not \(member.value.typeName)")
            }
        }
        if !indexOn.isEmpty { indexes.append(RulesIndexDeclaration(path: segments, keys: indexOn)) }
        return RuleNode(
            read: read, write: write, validate: validate, literalChildren: literalChildren, wildcard: wildcardNode)
    }

    // MARK: - Rules

    private mutating func compileRule(
        _ kind: RuleKind, _ member: RulesDocumentValue.Member, _ segments: [String], _ captures: [String: Int]
    ) -> CompiledRule? {
        let path = rulePath(segments, kind.rawValue)
        let value = member.value
        let position = lines.position(of: value.offset)
        let rule: CompiledRule
        switch value.kind {
        case .bool(let flag):
            rule = CompiledRule(kind: kind, rulePath: path, source: flag ? "true" : "false", position: position, body: .constant(flag))
        case .string(let decoded):
            guard decoded.bytes.count <= options.limits.maxExpressionBytes else {
                error(
                    at: value.offset, path,
                    "the expression is \(decoded.bytes.count) bytes long, more than the limit of \(options.limits.maxExpressionBytes)")
                return nil
            }
            var checker = ExpressionChecker(kind: kind, captures: captures, options: options)
            let expression: CompiledExpression
            do throws(ExpressionError) {
                let syntax = try ExpressionParser.parse(decoded.bytes, maxDepth: options.limits.maxExpressionDepth)
                expression = try checker.compileRule(syntax)
            } catch {
                self.error(at: decoded.sourceOffset(of: error.range.lowerBound), path, error.message)
                return nil
            }
            for finding in checker.warnings {
                warning(at: decoded.sourceOffset(of: finding.range.lowerBound), path, finding.message)
            }
            rule = CompiledRule(kind: kind, rulePath: path, source: decoded.text, position: position, body: .expression(expression))
        default:
            error(at: value.offset, path, "\(kind.rawValue) must be an expression string or a boolean, not \(value.typeName)")
            return nil
        }
        rules.append(rule)
        return rule
    }

    /// `.indexOn`: a string or an array of strings, each `.value` or a child path (§3.4).
    private mutating func readIndexOn(_ member: RulesDocumentValue.Member, _ segments: [String]) -> [String] {
        let path = rulePath(segments, ".indexOn")
        var entries: [(String, Int)] = []
        switch member.value.kind {
        case .string(let decoded):
            entries.append((decoded.text, member.value.offset))
        case .array(let elements):
            for element in elements {
                guard case .string(let decoded) = element.kind else {
                    error(at: element.offset, path, ".indexOn entries must be strings, not \(element.typeName)")
                    continue
                }
                entries.append((decoded.text, element.offset))
            }
        default:
            error(at: member.value.offset, path, ".indexOn must be a string or an array of strings, not \(member.value.typeName)")
            return []
        }
        var keys: [String] = []
        for (entry, offset) in entries {
            if entry == ".value" {
                keys.append(entry)
            } else if entry == ".key" || entry == ".priority" {
                warning(at: offset, path, "\"\(entry)\" needs no index: keys and priorities are always indexed; ignored")
                continue
            } else if let keyPath = try? Path(entry), !keyPath.isRoot {
                keys.append(keyPath.keys.map(\.string).joined(separator: "/"))
            } else {
                error(at: offset, path, "\"\(entry)\" is not a valid .indexOn entry (a child path or \".value\")")
                continue
            }
            if keys.dropLast().contains(keys[keys.count - 1]) {
                warning(at: offset, path, "\"\(entry)\" is listed twice")
                keys.removeLast()
            }
        }
        return keys
    }
}
