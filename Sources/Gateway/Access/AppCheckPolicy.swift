import Auth

/// Whether and how the gateway checks Firebase App Check tokens (the wire `appcheck` request, the `ac` URL
/// parameter of `/.ws` and `/.lp`, REST's `X-Firebase-AppCheck` header and `ac` parameter).
public struct AppCheckPolicy: Sendable {
    /// What a missing or invalid token does.
    public enum Mode: String, Sendable, CaseIterable {
        /// Tokens are not checked; `appcheck` is answered `ok`.
        case off
        /// Tokens are checked, counted in `/.metrics` and logged; nothing is refused.
        case monitor
        /// Data access (listen, get, writes, onDisconnect) without a valid token is refused with
        /// `permission_denied` (REST: 401), as Firebase does once App Check is enforced. The admin credential is
        /// exempt, as Firebase's Admin SDKs are.
        case enforce
    }

    /// The mode.
    public var mode: Mode
    /// The verifier; `nil` turns checking off whatever the mode.
    public var verifier: AppCheckVerifier?

    /// Creates a policy (the default: off).
    public init(mode: Mode = .off, verifier: AppCheckVerifier? = nil) {
        self.mode = mode
        self.verifier = verifier
    }

    /// The verifier when tokens are checked.
    var activeVerifier: AppCheckVerifier? {
        mode == .off ? nil : verifier
    }

    /// The `d` of an `appcheck` answer refusing a token, and the shutdown reason Android recognises.
    static let invalidTokenMessage = "Invalid appcheck token"
    /// The `d` of an `appcheck` answer refusing an expired token, and of `apc` when a token expires.
    static let expiredTokenMessage = "App Check token is expired."
}
