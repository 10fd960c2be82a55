/// Data received from a client for one write: a ``Node`` plus the server values still to be resolved.
///
/// Parsing happens off the shard (on the connection's queue); resolution happens on the shard at apply time, where
/// the current data is known (wire-protocol.md §6.8 step 2). Each placeholder holds a temporary leaf `0` in ``node``,
/// so the structure around it (its siblings, its parent's priority) is already final.
public struct WriteValue: Sendable, Equatable {
    /// The value with a temporary `0` at every value placeholder.
    public var node: Node
    /// The server values to compute, value placeholders before priority placeholders is not required.
    public var serverValues: [ServerValuePlaceholder]

    /// Wraps a node without server values.
    public init(node: Node, serverValues: [ServerValuePlaceholder] = []) {
        self.node = node
        self.serverValues = serverValues
    }

    /// Resolves every placeholder.
    ///
    /// - Parameters:
    ///   - timestamp: the server time for `{".sv":"timestamp"}`, milliseconds since the Unix epoch.
    ///   - existing: the node currently stored at a path relative to the write location (before this write);
    ///     consulted only for increments.
    /// - Returns: the node to store.
    /// - Throws: ``ValueError/numberOutOfRange`` when an increment overflows.
    public func resolved(timestamp: Double, existing: (Path) -> Node) throws(ValueError) -> Node {
        guard !serverValues.isEmpty else { return node }
        var result = node
        for placeholder in serverValues where !placeholder.isPriority {
            let current: Double?
            if case .increment = placeholder.value, case .number(let number)? = existing(placeholder.path).leafValue {
                current = number
            } else {
                current = nil
            }
            let value = try placeholder.value.resolve(timestamp: timestamp, current: current)
            let priority = result.descendant(at: placeholder.path).priority
            result.set(Node(.number(value), priority: priority), at: placeholder.path)
        }
        for placeholder in serverValues where placeholder.isPriority {
            var current: Double?
            if case .increment = placeholder.value, case .number(let number)? = existing(placeholder.path).priority {
                current = number
            }
            let value = try placeholder.value.resolve(timestamp: timestamp, current: current)
            result.modifyDescendant(at: placeholder.path) { $0.setPriority(.number(value)) }
        }
        return result
    }
}

extension Node {
    /// Gives `body` in-place access to the descendant at `path`; missing levels are created only if the result is
    /// non-empty (the same rules as ``set(_:at:)``).
    public mutating func modifyDescendant(at path: Path, _ body: (inout Node) -> Void) {
        modifyDescendant(at: path.keys[...], body)
    }

    private mutating func modifyDescendant(at keys: ArraySlice<Key>, _ body: (inout Node) -> Void) {
        guard let first = keys.first else {
            body(&self)
            return
        }
        modifyChild(first) { $0.modifyDescendant(at: keys.dropFirst(), body) }
    }
}
