import Wire

/// A wire session's credentials and their bookkeeping (``WireSession+Auth``, ``WireSession+AppCheck``).
///
/// Made the first time the client authenticates, presents an App Check token or is held to App Check: many
/// connections never do, and an idle one then keeps none of this. Owned by the session's event loop.
final class SessionCredentials {
    /// Who the client is.
    var identity = ConnectionIdentity.unauthenticated
    /// Bumped whenever the identity changes, so a pending expiry of an older credential does nothing.
    var identityGeneration = 0
    /// Requests that arrived while an `auth` or `appcheck` waited for signing keys being fetched; they run in
    /// order once it is answered. `nil` while nothing waits.
    var heldRequests: [ClientRequest]?
    /// What the connection's App Check token is worth.
    var appCheck = AppCheckStanding.none
    /// Bumped whenever the App Check token changes, so a pending expiry of an older one does nothing.
    var appCheckGeneration = 0
    /// Whether a data request without a valid App Check token was logged yet (once per connection).
    var appCheckMissingLogged = false
    /// Paces `auth` requests (``SessionLimits/maxAuthAttemptsPerSecond``).
    var authAttempts: TokenBucket

    init(maxAuthAttemptsPerSecond: Int) {
        let rate = Double(maxAuthAttemptsPerSecond)
        authAttempts = TokenBucket(rate: rate, burst: rate)
    }
}

extension WireSession {
    /// The credentials' state, made on first use.
    var credentials: SessionCredentials {
        if let credentialsIfMade { return credentialsIfMade }
        let made = SessionCredentials(maxAuthAttemptsPerSecond: services.limits.maxAuthAttemptsPerSecond)
        credentialsIfMade = made
        return made
    }

    /// Who the client is (``WireSession+Auth``).
    var identity: ConnectionIdentity {
        get { credentialsIfMade?.identity ?? .unauthenticated }
        set { credentials.identity = newValue }
    }

    /// What the connection's App Check token is worth (``WireSession+AppCheck``).
    var appCheck: AppCheckStanding {
        get { credentialsIfMade?.appCheck ?? .none }
        set { credentials.appCheck = newValue }
    }
}
