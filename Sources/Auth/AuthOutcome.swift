/// The result of checking one credential from an `auth`/`gauth` request (wire-protocol.md §6.2).
public enum AuthOutcome: Sendable, Equatable {
    /// The admin credential: security rules are bypassed.
    case admin
    /// A valid token for this user.
    case user(AuthIdentity)
    /// The credential is not acceptable; the wire status is `invalid_token` ("Could not parse auth token.").
    ///
    /// `reason` is for the server log: it never contains the credential, claim values or key material.
    case invalid(reason: String)
    /// A correctly signed token whose `exp` has passed; the wire status is `expired_token`.
    case expired
}
