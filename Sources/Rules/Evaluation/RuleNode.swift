import DataModel

/// One location of the rules tree: its rules and the rule nodes below it (security-rules.md §1.3, §2).
final class RuleNode: Sendable {
    let read: CompiledRule?
    let write: CompiledRule?
    let validate: CompiledRule?
    /// Children named literally.
    let literalChildren: [Key: RuleNode]
    /// The same children in file order, so walks (and their traces) are deterministic.
    let literalChildList: [(key: Key, node: RuleNode)]
    /// The keys of ``literalChildList``, scanned by ``literalChild(_:)``.
    private let literalKeys: [Key]
    /// The `$wildcard` child, which matches every key not named literally.
    let wildcard: RuleNode?
    /// Whether this node or any below it has a `.validate` rule; writes skip subtrees without any.
    let hasValidation: Bool
    /// Whether the wildcard's `.validate` is literally `false` (the `"$other": {".validate": false}` idiom), so any
    /// key not named literally fails without evaluating anything per key.
    let wildcardAlwaysFails: Bool

    init(
        read: CompiledRule?, write: CompiledRule?, validate: CompiledRule?, literalChildren: [(key: Key, node: RuleNode)],
        wildcard: RuleNode?
    ) {
        self.read = read
        self.write = write
        self.validate = validate
        self.literalChildList = literalChildren
        self.literalKeys = literalChildren.map(\.key)
        self.literalChildren = Dictionary(literalChildren, uniquingKeysWith: { first, _ in first })
        self.wildcard = wildcard
        hasValidation =
            validate != nil || wildcard?.hasValidation == true || literalChildren.contains { $0.node.hasValidation }
        wildcardAlwaysFails = wildcard?.validate?.isAlwaysFalse == true
    }

    /// The rule node for child `key`: the literal child if there is one — with no fallback to the wildcard
    /// (§2 step 3) — else the wildcard, else nil.
    func child(_ key: Key) -> RuleNode? {
        literalChild(key) ?? wildcard
    }

    /// The child named literally `key`. Short lists are scanned (comparing a few keys' bytes is cheaper than
    /// hashing one), long ones looked up.
    func literalChild(_ key: Key) -> RuleNode? {
        if literalKeys.count <= 8 {
            // By index, so no entry is copied on the way.
            let index = literalKeys.withUnsafeBufferPointer { keys in keys.firstIndex { $0 == key } }
            return index.map { literalChildList[$0].node }
        }
        return literalChildren[key]
    }

    /// Whether there are rule nodes below this one.
    var hasChildren: Bool { wildcard != nil || !literalChildren.isEmpty }
}
