/// An error or warning about a rules file, located by file, line, column and the rule's place in the rules tree.
public struct RulesDiagnostic: Sendable, Equatable, CustomStringConvertible {
    /// How serious the finding is.
    public enum Severity: String, Sendable {
        /// The file is rejected.
        case error
        /// The file loads, but probably does not do what its author meant.
        case warning
    }

    /// Error or warning.
    public var severity: Severity
    /// The file name given when loading.
    public var file: String
    /// Where in the file; `nil` when the problem concerns the whole file (it cannot be read, it is too large).
    public var position: SourcePosition?
    /// The rule's place in the rules tree, such as `/rooms/$room/.write` (empty for the document's structure).
    public var rulePath: String
    /// What is wrong.
    public var message: String

    /// Creates a diagnostic.
    public init(severity: Severity, file: String, position: SourcePosition?, rulePath: String, message: String) {
        self.severity = severity
        self.file = file
        self.position = position
        self.rulePath = rulePath
        self.message = message
    }

    /// `file:line:column: error: message (at /rule/path)`, the form compilers use so editors can jump to it.
    public var description: String {
        var text = file
        if let position { text += ":\(position.line):\(position.column)" }
        text += ": \(severity.rawValue): \(message)"
        if !rulePath.isEmpty { text += " (at \(rulePath))" }
        return text
    }
}

/// Why a rules file was rejected: every error found (up to ``RulesLimits/maxErrors``), in file order.
public struct RulesLoadError: Error, Sendable, CustomStringConvertible {
    /// The errors; never empty.
    public var errors: [RulesDiagnostic]
    /// Warnings found before loading stopped (for context; they alone never reject a file).
    public var warnings: [RulesDiagnostic]

    /// Creates a load error.
    public init(errors: [RulesDiagnostic], warnings: [RulesDiagnostic] = []) {
        self.errors = errors
        self.warnings = warnings
    }

    /// One error per line.
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}
