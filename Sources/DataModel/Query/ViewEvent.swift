/// A Firebase event raised for a query view (the SDK's `child_*` and `value` events).
///
/// A batch of events for one write is ordered as the SDK's `EventGenerator` orders them: all `childRemoved`, then
/// `childAdded`, `childMoved`, `childChanged` (each group in index order), then one `value`. `previousKey` is the key
/// of the child just before this one in the view after the write, `nil` for the first.
public enum ViewEvent: Sendable, Equatable, CustomStringConvertible {
    /// A child left the view; `node` is its last value in the view.
    case childRemoved(key: Key, node: Node)
    /// A child entered the view.
    case childAdded(key: Key, node: Node, previousKey: Key?)
    /// A child in the view changed the value its index orders by (raised before its `childChanged`).
    case childMoved(key: Key, node: Node, previousKey: Key?)
    /// A child in the view changed.
    case childChanged(key: Key, node: Node, previousKey: Key?)
    /// The view's data changed; read it with ``QueryWindow/result(from:index:)``.
    case value

    /// The key of a child event, `nil` for `value`.
    public var key: Key? {
        switch self {
        case .childRemoved(let key, _), .childAdded(let key, _, _), .childMoved(let key, _, _),
            .childChanged(let key, _, _):
            return key
        case .value:
            return nil
        }
    }

    /// `kind key (after previous)` for logs and test failures.
    public var description: String {
        switch self {
        case .childRemoved(let key, _): return "child_removed \(key)"
        case .childAdded(let key, _, let previous): return "child_added \(key) after \(previous?.string ?? "-")"
        case .childMoved(let key, _, let previous): return "child_moved \(key) after \(previous?.string ?? "-")"
        case .childChanged(let key, _, let previous): return "child_changed \(key) after \(previous?.string ?? "-")"
        case .value: return "value"
        }
    }
}
