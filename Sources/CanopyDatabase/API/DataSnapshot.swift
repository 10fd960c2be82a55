import DataModel
import Foundation

/// The data at a location at one moment, as an event or a read delivers it (the SDK's `DataSnapshot`).
public final class DataSnapshot: @unchecked Sendable {  // immutable
    /// Where the data is.
    public let ref: DatabaseReference
    let node: Node
    /// The query whose order ``children`` follows (`nil`: the default order, by priority then key).
    let query: QueryParams?

    init(reference: DatabaseReference, node: Node, query: QueryParams?) {
        self.ref = reference
        self.node = node
        self.query = query
    }

    /// The location's last key (`nil` at the root).
    public var key: String { ref.key ?? "" }

    /// The value: `[String: Any]`, `[Any]` (objects whose keys are small integers), `String`, `NSNumber` (numbers
    /// and booleans), or `nil` when there is no data.
    public var value: Any? { ValueConversion.value(of: node) }

    /// The value with `.priority` (and `.value` for prioritized leaves) included, as `exportVal()` gives it.
    public var valueInExportFormat: Any? { ValueConversion.value(of: node, exportPriority: true) }

    /// The priority: a `String`, an `NSNumber` or `nil`.
    public var priority: Any? { node.priority.map(ValueConversion.value(of:)) }

    /// Whether there is data.
    public func exists() -> Bool { !node.isEmpty }

    /// Whether there are children.
    public var hasChildren: Bool { node.hasChildren }

    /// How many children there are.
    public var childrenCount: UInt { UInt(node.childCount) }

    /// Whether there is data at `path` below this location.
    public func hasChild(_ path: String) -> Bool {
        guard let relative = try? Path(path) else { return false }
        return !node.descendant(at: relative).isEmpty
    }

    /// The data at `path` below this location.
    public func childSnapshot(forPath path: String) -> DataSnapshot {
        let relative = (try? Path(path)) ?? .root
        return DataSnapshot(reference: ref.child(path), node: node.descendant(at: relative), query: nil)
    }

    /// The children, in the query's order (or by priority, then key).
    public var children: [DataSnapshot] {
        (query ?? .all).select(from: node).map { entry in
            DataSnapshot(reference: ref.child(entry.key.string), node: entry.node, query: nil)
        }
    }

    /// The value decoded as `type` (through its JSON form).
    public func data<T: Decodable>(as type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        let json = try ValueConversion.jsonBytes(value)
        return try decoder.decode(type, from: Data(json))
    }
}

extension DataSnapshot: CustomStringConvertible {
    public var description: String { "\(ref.description) \(String(describing: value))" }
}
