/// An `.indexOn` declaration: the rules-tree location (segments, `$wildcards` kept) and the indexed child paths or
/// `.value` (security-rules.md §3.4).
public struct RulesIndexDeclaration: Sendable, Equatable {
    /// Rules-tree segments from the root, such as `["rooms", "$room", "messages"]`.
    public var path: [String]
    /// The declared child paths (`"timestamp"`, `"address/zip"`) or `".value"`.
    public var keys: [String]

    /// Creates a declaration.
    public init(path: [String], keys: [String]) {
        self.path = path
        self.keys = keys
    }
}
