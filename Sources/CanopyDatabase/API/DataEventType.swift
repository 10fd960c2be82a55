/// The events an observer can ask for (the SDK's `DataEventType`).
public enum DataEventType: Int, Sendable {
    /// A child was added (and, for the first observation, each existing child).
    case childAdded
    /// A child was removed.
    case childRemoved
    /// A child's data changed.
    case childChanged
    /// A child moved in the query's order.
    case childMoved
    /// The location's data, once and after every change.
    case value
}

/// A failure the server reported, or a local one (offline, an invalid value).
public struct DatabaseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The wire status: `permission_denied`, `datastale`, `disconnected`, `invalid_data`, …
    public let status: String
    /// The server's message.
    public let message: String

    public var description: String { message.isEmpty ? status : "\(status): \(message)" }
}
