import DataModel

/// An authenticated user: who they are, when their token stops being accepted, and the rules' `auth` variable.
public struct AuthIdentity: Sendable, Equatable {
    /// The user id, from the `sub` claim (Firebase ID tokens repeat it as `user_id`).
    public var uid: String
    /// `firebase.sign_in_provider` (`password`, `anonymous`, `custom`, …) when the token has it.
    public var provider: String?
    /// Every claim of the token, as an object in token order; the rules' `auth.token`.
    public var claims: JSONValue
    /// The `exp` claim in seconds since the epoch, or `nil` when the token has none (or is unsigned, see
    /// ``AuthConfiguration/allowUnsignedTokens``).
    public var expiresAt: Double?
    /// When the verifier stops accepting this token, in seconds since the epoch: `exp` plus
    /// ``AuthConfiguration/clockSkewSeconds``. The gateway revokes the connection's authentication (`ac`) then.
    public var acceptedUntil: Double?

    /// Creates an identity.
    public init(uid: String, provider: String?, claims: JSONValue, expiresAt: Double?, acceptedUntil: Double?) {
        self.uid = uid
        self.provider = provider
        self.claims = claims
        self.expiresAt = expiresAt
        self.acceptedUntil = acceptedUntil
    }

    /// The rules' `auth` variable: `{"uid":…,"provider":…,"token":{claims}}`, `provider` only when known.
    ///
    /// Derived on each access, so it always matches the other fields; the gateway keeps one per connection.
    public var ruleVariable: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("uid", .string(uid))]
        if let provider { members.append(("provider", .string(provider))) }
        members.append(("token", claims))
        return .object(members)
    }
}
