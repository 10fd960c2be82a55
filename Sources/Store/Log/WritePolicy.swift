import DataModel

/// The security rules as the store applies them to writes. The gateway compiles them from a ``RulesRevision``
/// (through the store's ``RulesCompiler``); the store calls them while it applies a write, on its sequencer,
/// against the whole tree as the write finds it.
///
/// A policy must be a pure function of the authorization it is given (no clock, no randomness): the log replays
/// its decisions.
public protocol WritePolicy: Sendable {
    /// Whether the write may be applied.
    func allows(_ authorization: WriteAuthorization) -> Bool
}

/// Compiles a rules revision's source into a policy; `nil` when the source does not compile. The store compiles
/// every revision it sequences or replays with it.
public typealias RulesCompiler = @Sendable (_ source: [UInt8]) -> (any WritePolicy)?

/// What a ``WritePolicy`` decides on: one write, who made it, and the whole tree before and after it.
public struct WriteAuthorization: Sendable {
    /// The write being decided on (a push names the child it creates).
    public let write: StoreWrite
    /// The rules' `auth`.
    public let auth: JSONValue?
    /// The whole tree just before the write.
    public let oldRoot: Node
    /// The whole tree with the write applied and its server values resolved.
    public let newRoot: Node
    /// The entry's server time (milliseconds) — the rules' `now`.
    public let timestamp: Double
    /// The locations the write changes.
    public let changes: [Change]
    /// Whether the decision is being replayed from the journal (it was taken and reported before).
    public let isReplay: Bool
}
