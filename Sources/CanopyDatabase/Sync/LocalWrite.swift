import DataModel

/// A write the client made and the server has not acknowledged: shown to local listeners at once (latency
/// compensation), dropped when acknowledged, rolled back when refused.
struct LocalWrite {
    /// Each location written and its value, as the client resolved it (server values estimated with the
    /// server's clock offset); a set has one entry, an update one per child path.
    var entries: [(path: Path, value: LocalValue)]
    let id: Int

    /// `node` with this write applied, where `node` is the data at `location`.
    func applied(to node: Node, at location: Path) -> Node {
        var result = node
        for entry in entries {
            if entry.path.contains(location), let relative = entry.path.relativePath(to: location) {
                result = entry.value.node.descendant(at: relative)
            } else if location.contains(entry.path), let relative = location.relativePath(to: entry.path) {
                result = result.setting(entry.value.node, at: relative)
            }
        }
        return result
    }

    /// Whether the write touches `location` or anything above or below it.
    func affects(_ location: Path) -> Bool {
        entries.contains { $0.path.contains(location) || location.contains($0.path) }
    }
}
