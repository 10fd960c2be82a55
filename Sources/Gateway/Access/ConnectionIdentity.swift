import Auth
import DataModel

/// Who a connection is, as the security rules will see it.
enum ConnectionIdentity: Sendable {
    /// No credential: rules see `auth == null`.
    case unauthenticated
    /// The admin credential: rules are bypassed.
    case admin
    /// A verified user token: rules see its claims.
    case user(AuthIdentity)
    /// The admin credential with an auth override (`authvar`, or `noauth` for `nil`): rules see that value.
    case override(JSONValue?)
}

extension ConnectionIdentity {
    /// The identity a verified credential gives, `nil` when it is refused (`expired` or `invalid`).
    ///
    /// - Parameters:
    ///   - outcome: what the token verifier said.
    ///   - override: for the admin credential, the `auth` the rules should see instead (`.some(nil)`: no auth).
    init?(_ outcome: AuthOutcome, override: JSONValue?? = nil) {
        switch outcome {
        case .admin:
            if let override { self = .override(override) } else { self = .admin }
        case .user(let user): self = .user(user)
        case .expired, .invalid: return nil
        }
    }

    /// Whether the connection presented the admin credential (with or without an auth override).
    var holdsAdminCredential: Bool {
        switch self {
        case .admin, .override: return true
        case .unauthenticated, .user: return false
        }
    }

    /// The rules' `auth` for this identity, or `nil` for the admin (who bypasses rules).
    var rulesAuth: JSONValue?? {
        switch self {
        case .admin: return nil
        case .unauthenticated: return .some(nil)
        case .user(let user): return .some(user.ruleVariable)
        case .override(let variable): return .some(variable)
        }
    }
}
