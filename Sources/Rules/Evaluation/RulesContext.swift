import DataModel

/// The request-independent inputs of an authorization: who asks, the data as it is, and the time.
public struct RulesContext: Sendable {
    /// The rules' `auth` variable: `nil` (or `.null`) when unauthenticated, otherwise the object the gateway builds
    /// from the verified token — `{"uid": …, "provider": …, "token": {claims}}` (security-rules.md §8).
    public var auth: JSONValue?
    /// The whole tree before the operation (`root`; `data` is read from it). The gateway may pass a tree holding
    /// only the parts of the database it has at hand; rules reading elsewhere then see empty data.
    public var root: Node
    /// The rules' `now`: server time in milliseconds since the Unix epoch — for a write, the same timestamp that
    /// resolved its server values, so `newData.val() == now` holds for `{".sv": "timestamp"}` (§3.7).
    public var now: Double
    /// Whether to record every rule evaluated in ``RulesDecision/trace`` (for `--explain-denials`); off on the fast
    /// path, where a decision allocates nothing for the trace.
    public var explain: Bool

    /// Creates a context.
    public init(auth: JSONValue?, root: Node, now: Double, explain: Bool = false) {
        self.auth = auth
        self.root = root
        self.now = now
        self.explain = explain
    }
}
