import DataModel

/// What a write does to a tree: the targets it writes with their server values resolved, and the tree it leaves.
///
/// The one place a write becomes a rules question: the log previews every judged write before it applies it, and
/// the onDisconnect pre-check and the console's simulator preview theirs the same way, so all three ask the rules
/// the same question (docs/protocol/data-model.md: server values; a priority is a number, a string or nothing).
public struct WritePreview: Sendable {
    /// The write as the rules judge it: a push as the set of the child it creates.
    public let write: StoreWrite
    /// The tree before the write.
    public let before: Node
    /// The tree after the write.
    public let after: Node
    /// What the write changes, in apply order.
    public let changes: [Change]

    /// Previews `write` on `root` at server time `timestamp`; a push names its child `pushKey`.
    ///
    /// - Throws: ``StoreError`` when a value cannot be written: a server value that does not resolve, or a
    ///   priority that is not a number, a string or nothing.
    public init(_ write: StoreWrite, on root: Node, at timestamp: Double, pushKey: @autoclosure () -> Key)
        throws(StoreError)
    {
        let targets = WriteTargets(write, pushKey: pushKey())
        var resolved: [ResolvedValue] = []
        resolved.reserveCapacity(targets.entries.count)
        for target in targets.entries {
            resolved.append(try target.resolve(timestamp: timestamp) { root.descendant(at: $0) })
        }
        var after = root
        for (target, value) in zip(targets.entries, resolved) {
            switch value {
            case .node(let node): after.set(node, at: target.path)
            case .priority(let priority): after.modifyDescendant(at: target.path) { $0.setPriority(priority) }
            }
        }
        changes = targets.entries.map { target in
            Change(path: target.path, oldValue: root.descendant(at: target.path),
                   newValue: after.descendant(at: target.path))
        }
        if case .push(_, let value) = write, let first = targets.entries.first {
            self.write = .set(first.target, value, expectedHash: nil)
        } else {
            self.write = write
        }
        before = root
        self.after = after
    }

    /// The push key of a preview that never names a child: callers whose writes are sets and updates only
    /// (onDisconnect operations, rules test cases) pass it.
    public static let noPushKey = Key(trusted: "push")

    /// The rules question of this write by `auth`, at `timestamp`, reported as `operation` by `caller`
    /// (`nil`: silently).
    public func question(auth: JSONValue?, timestamp: Double, operation: String, caller: String?) -> WriteQuestion {
        WriteQuestion(write: write, auth: auth, oldRoot: before, newRoot: after, timestamp: timestamp,
                      changes: changes, operation: operation, caller: caller)
    }
}

extension StoreWrite {
    /// `set`, `update` or `push`, as live reports name it.
    public var operationName: String {
        switch self {
        case .set: return "set"
        case .update: return "update"
        case .push: return "push"
        }
    }

    /// The location a write is addressed to (an update's base path, a push's parent).
    public var location: Path {
        switch self {
        case .set(let target, _, _): return target.path
        case .update(let path, _), .push(let path, _): return path
        }
    }
}
