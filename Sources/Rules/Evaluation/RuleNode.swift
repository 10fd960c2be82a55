import DataModel

/// One location of the rules tree: its rules and the rule nodes below it (security-rules.md §1.3, §2).
final class RuleNode: Sendable {
    /// The location in rules-path form, such as `/rooms/$room`.
    let location: String
    let read: CompiledRule?
    let write: CompiledRule?
    let validate: CompiledRule?
    /// `.indexOn` entries.
    let indexOn: [String]
    /// Children named literally.
    let literalChildren: [Key: RuleNode]
    /// The same children in file order, so walks (and their traces) are deterministic.
    let literalChildList: [(key: Key, node: RuleNode)]
    /// The `$wildcard` child, which matches every key not named literally.
    let wildcard: RuleNode?
    /// The wildcard's name including `$`.
    let wildcardName: String?

    init(
        location: String, read: CompiledRule?, write: CompiledRule?, validate: CompiledRule?, indexOn: [String],
        literalChildren: [(key: Key, node: RuleNode)], wildcard: RuleNode?, wildcardName: String?
    ) {
        self.location = location
        self.read = read
        self.write = write
        self.validate = validate
        self.indexOn = indexOn
        self.literalChildList = literalChildren
        self.literalChildren = Dictionary(literalChildren, uniquingKeysWith: { first, _ in first })
        self.wildcard = wildcard
        self.wildcardName = wildcardName
    }

    /// The rule node for child `key`: the literal child if there is one — with no fallback to the wildcard
    /// (§2 step 3) — else the wildcard, else nil.
    func child(_ key: Key) -> RuleNode? {
        literalChildren[key] ?? wildcard
    }

    /// Whether there are rule nodes below this one.
    var hasChildren: Bool { wildcard != nil || !literalChildren.isEmpty }
}
