/// The kind of a rule expression in the rules file.
public enum RuleKind: String, Sendable, Hashable, CaseIterable {
    /// `.read`: may the location be read (cascades down).
    case read = ".read"
    /// `.write`: may the location be written (cascades down).
    case write = ".write"
    /// `.validate`: must the new data at the location hold (does not cascade).
    case validate = ".validate"
}
