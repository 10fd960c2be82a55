/// What a write path addresses: a node, or the priority of a node when the last segment is `.priority`
/// (data-model.md §2.1, wire-protocol.md §6.8: `setPriority()` sends `{"p":"/a/b/.priority","d":5}`).
public enum WriteTarget: Sendable, Hashable {
    /// The node at the path.
    case node(Path)
    /// The priority of the node at the path.
    case priority(of: Path)

    /// The reserved last segment that addresses a priority.
    public static let prioritySegment = ".priority"

    /// Parses a write path whose last segment may be `.priority`.
    ///
    /// - Throws: ``PathError`` for any other invalid segment or when too deep.
    public init(parsing string: String, limits: DataLimits = .default) throws(PathError) {
        var text = Substring(string)
        while text.hasSuffix("/") { text = text.dropLast() }
        if text == WriteTarget.prioritySegment || text.hasSuffix("/" + WriteTarget.prioritySegment) {
            let parent = text.dropLast(WriteTarget.prioritySegment.utf8.count)
            self = .priority(of: try Path(String(parent), limits: limits))
        } else {
            self = .node(try Path(String(text), limits: limits))
        }
    }
}

extension WriteTarget {
    /// This relative target placed under `base`.
    public func below(_ base: Path) -> WriteTarget {
        switch self {
        case .node(let path): return .node(base.appending(path))
        case .priority(of: let path): return .priority(of: base.appending(path))
        }
    }
}
