/// What a query orders a location's children by (data-model.md §7); the wire `i` member.
public enum QueryIndex: Sendable, Hashable, CustomStringConvertible {
    /// `orderByPriority()` and the default of every query without `orderBy*`.
    case priority
    /// `orderByKey()` (wire `".key"`).
    case key
    /// `orderByValue()` (wire `".value"`).
    case value
    /// `orderByChild(path)` (wire: the path without leading slash); the path is never the root.
    case child(Path)

    /// The sort value of a child under this index; `.null` for the key index (keys alone decide).
    public func sortValue(of child: Node) -> SortValue {
        switch self {
        case .priority: return SortValue(child.priority)
        case .key: return .null
        case .value: return SortValue(child)
        case .child(let path): return SortValue(child.descendant(at: path))
        }
    }

    /// Whether a change from `old` to `new` changes what this index looks at — the SDK's `indexedValueChanged`,
    /// which decides `child_moved` events: never for keys, any change for values, the node at the path for child
    /// indexes, the priority for the priority index.
    public func indexedValueChanged(from old: Node, to new: Node) -> Bool {
        switch self {
        case .key: return false
        case .value: return old != new
        case .child(let path): return old.descendant(at: path) != new.descendant(at: path)
        case .priority: return old.priority != new.priority
        }
    }

    /// The wire `i` text: `.priority`, `.key`, `.value` or the child path without leading slash.
    public var description: String {
        switch self {
        case .priority: return ".priority"
        case .key: return ".key"
        case .value: return ".value"
        case .child(let path): return path.keys.map(\.string).joined(separator: "/")
        }
    }
}
