import DataModel
import Store

/// The writes a connection asked to run when it goes away (`o`, `om`, `oc`; wire-protocol.md §10).
///
/// Kept as an ordered list of sets at absolute locations, run as one atomic update at the root whose entries apply
/// in order, so a later operation below an earlier one refines it. This matches the SDK's own model
/// (`SparseSnapshotTree`): remembering at a location replaces what was remembered at and below it; forgetting a
/// location drops it and everything below, and splits a remembered ancestor into its children so the siblings of
/// the forgotten location are still written. Server values stay unresolved until the operations run.
struct OnDisconnectQueue {
    private(set) var entries: [(target: WriteTarget, value: WriteValue)] = []

    var isEmpty: Bool { entries.isEmpty }

    /// Remembers "set `value` at `target`".
    mutating func remember(_ value: WriteValue, at target: WriteTarget) {
        switch target {
        case .node(let path): entries.removeAll { path.contains($0.target.location) }
        case .priority: entries.removeAll { $0.target == target }
        }
        entries.append((target, value))
    }

    /// Forgets everything at and below `path`, keeping the siblings of `path` within remembered ancestors.
    mutating func forget(_ path: Path) {
        var kept: [(target: WriteTarget, value: WriteValue)] = []
        for entry in entries {
            if path.contains(entry.target.location) { continue }
            if case .node(let base) = entry.target, let relative = base.relativePath(to: path) {
                kept.append(contentsOf: Self.split(entry.value, at: base, dropping: relative))
            } else {
                kept.append(entry)
            }
        }
        entries = kept
    }

    /// The queued operations as one write.
    var write: StoreWrite {
        .update(.root, entries.map { UpdateEntry(target: $0.target, value: $0.value) })
    }

    /// `value` at `base` as sets of its children, without the descendant at `relative` (non-empty).
    private static func split(_ value: WriteValue, at base: Path, dropping relative: Path)
        -> [(target: WriteTarget, value: WriteValue)]
    {
        guard let first = relative.firstKey else { return [] }
        var parts: [(target: WriteTarget, value: WriteValue)] = []
        for child in value.node.children {
            let childValue = value.child(child.key)
            if child.key == first {
                if relative.depth > 1 {
                    parts += split(childValue, at: base.child(child.key), dropping: relative.dropFirst())
                }
            } else {
                parts.append((.node(base.child(child.key)), childValue))
            }
        }
        return parts
    }
}

extension WriteValue {
    /// The part of this value at child `key`, with the server values inside it.
    func child(_ key: Key) -> WriteValue {
        let prefix = Path(keys: [key])
        let placeholders = serverValues.compactMap { placeholder -> ServerValuePlaceholder? in
            guard let relative = prefix.relativePath(to: placeholder.path) else { return nil }
            return ServerValuePlaceholder(path: relative, isPriority: placeholder.isPriority, value: placeholder.value)
        }
        return WriteValue(node: node.child(key), serverValues: placeholders)
    }
}

extension WriteTarget {
    /// The node the target addresses (for a priority, the node whose priority it is).
    var location: Path {
        switch self {
        case .node(let path), .priority(of: let path): return path
        }
    }
}
