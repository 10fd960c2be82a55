import Rules

/// Why rules uploaded by an admin (``Gateway/replaceRules(of:with:)``) were not put in force.
public enum RulesUploadError: Error, Sendable {
    /// The namespace's name is not valid; the description says why.
    case invalidNamespace(String)
    /// The rules do not load.
    case invalidRules(RulesLoadError)
}
