import DataModel
import Store

/// The simplest possible model of a namespace: one `Node` with Firebase write semantics, no shards. Tests compare
/// the store against it.
struct ReferenceTree {
    var root = Node.empty

    /// Applies `write` as Firebase would; returns `false` when a compare-and-set fails (nothing changes).
    @discardableResult
    mutating func apply(_ write: StoreWrite, timestamp: Double) -> Bool {
        let before = root
        let entries: [(target: WriteTarget, value: WriteValue)]
        switch write {
        case .set(let target, let value, let expectedHash):
            if let expectedHash {
                let path: Path
                switch target {
                case .node(let location), .priority(of: let location): path = location
                }
                if Store.hash(of: before.descendant(at: path)) != expectedHash { return false }
            }
            entries = [(target, value)]
        case .push(let parent, let value):
            // The model names the child as the store does for the first entry at the fixed time.
            let key = Key(trusted: PushIDGenerator.id(timestamp: Int64(timestamp), sequence: 1))
            entries = [(.node(parent.child(key)), value)]
        case .update(let base, let updates):
            entries = updates.map { update in
                switch update.target {
                case .node(let relative): return (.node(base.appending(relative)), update.value)
                case .priority(of: let relative): return (.priority(of: base.appending(relative)), update.value)
                }
            }
        }
        var resolved: [(WriteTarget, Node)] = []
        for (target, value) in entries {
            switch target {
            case .node(let path):
                guard let node = try? value.resolved(timestamp: timestamp, existing: {
                    before.descendant(at: path.appending($0))
                }) else { return false }
                resolved.append((target, node))
            case .priority(of: let path):
                guard let node = try? value.resolved(timestamp: timestamp, existing: { _ in
                    switch before.descendant(at: path).priority {
                    case .number(let number)?: return Node(.number(number))
                    case .string(let text)?: return Node(.string(text))
                    case nil: return .empty
                    }
                }) else { return false }
                resolved.append((target, node))
            }
        }
        for (target, node) in resolved {
            switch target {
            case .node(let path):
                root.set(node, at: path)
            case .priority(of: let path):
                let priority: Priority?
                switch node.leafValue {
                case .number(let number)?: priority = .number(number)
                case .string(let text)?: priority = .string(text)
                default: priority = nil
                }
                root.modifyDescendant(at: path) { $0.setPriority(priority) }
            }
        }
        return true
    }
}
