import DataModel
import Rules

/// Hears the live decisions of a ``RulesPolicy``: the console's feed of evaluations, the log of explained denials.
public protocol DecisionObserver: Sendable {
    /// Whether every decision is wanted, with its trace (a console is watching).
    var wantsEveryDecision: Bool { get }
    /// Whether denials are wanted, with their trace.
    var wantsDenials: Bool { get }
    /// One decision, traced, on the operation `report` describes.
    func observe(_ decision: RulesDecision, _ report: DecisionReport)
}

/// What a live decision was about.
public struct DecisionReport: Sendable {
    /// `read`, `query`, `set`, `update`, `push` or `onDisconnect`.
    public let operation: String
    /// The location addressed.
    public let path: Path
    /// The rules' `auth`.
    public let auth: JSONValue?
    /// Who asked (`session 12`, `REST 127.0.0.1:50000`, `store`).
    public let caller: String
    /// The rules' `now` (milliseconds since the Unix epoch).
    public let time: Double
}
