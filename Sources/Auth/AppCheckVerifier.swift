/// The result of checking one Firebase App Check token.
public enum AppCheckOutcome: Sendable, Equatable {
    /// A valid token of the app `appID` (its `sub`), accepted until `acceptedUntil` (its `exp` plus the clock skew,
    /// seconds since the epoch).
    case valid(appID: String, acceptedUntil: Double)
    /// A correctly signed token whose `exp` has passed.
    case expired
    /// Not a valid App Check token of this project; `reason` is for the log.
    case invalid(reason: String)
}

/// Verifies Firebase App Check tokens (what the JS SDK sends in `ac` and `appcheck`, the others in the
/// `X-Firebase-AppCheck` header), as Firebase's own back ends do:
/// - RS256, with a `kid` naming one of the keys published at the App Check JWKS URL (fetched and kept fresh like
///   ID-token keys, ``RemoteKeySource``);
/// - `iss` is `https://firebaseappcheck.googleapis.com/<project number>`;
/// - `aud` contains `projects/<project number>`;
/// - `sub` (the app id) is a non-empty string of at most 128 characters;
/// - `exp` is in the future and `iat` not in the future, within the clock skew.
///
/// There is no admin credential here: an App Check token is a JWT or nothing.
public final class AppCheckVerifier: Sendable {
    /// The project's number, from the Firebase console's project settings.
    public let projectNumber: String
    private let tokens: TokenVerifier

    /// Creates a verifier; the JWKS is fetched in the background from now on.
    ///
    /// - Throws: ``AuthConfigurationError/invalidProjectNumber(_:)``, or a key-source problem (a URL that is not
    ///   `https://`, an unreadable CA file).
    public init(projectNumber: String, keys: RemoteKeySource,
                clockSkewSeconds: Double = AuthConfiguration.defaultClockSkewSeconds) throws(AuthConfigurationError)
    {
        guard !projectNumber.isEmpty, projectNumber.utf8.count <= 32,
              projectNumber.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { throw .invalidProjectNumber(projectNumber) }
        self.projectNumber = projectNumber
        tokens = try TokenVerifier(policy: .appCheck(projectNumber: projectNumber), remoteKeys: keys,
                                   clockSkewSeconds: clockSkewSeconds, label: "app-check")
    }

    /// The state of the fetched keys.
    public var keyStatus: RemoteKeyStatus? {
        tokens.remoteKeyStatus
    }

    /// Checks `token` with the keys held now; never waits.
    public func verify(_ token: String, now: Double) -> AppCheckOutcome {
        Self.outcome(tokens.verify(token, now: now))
    }

    /// Checks `token` like ``verify(_:now:)``, unless it names a key that a refresh of the keys may bring: then
    /// `then` is called once the refresh ended (see ``TokenVerifier/verifyOrAwaitKeys(_:now:then:)``) and the caller
    /// asks ``verify(_:now:)`` again.
    ///
    /// - Returns: the outcome, or `nil` when `then` will be called.
    public func verifyOrAwaitKeys(_ token: String, now: Double, then: @escaping @Sendable () -> Void)
        -> AppCheckOutcome?
    {
        tokens.verifyOrAwaitKeys(token, now: now, then: then).map(Self.outcome)
    }

    private static func outcome(_ outcome: AuthOutcome) -> AppCheckOutcome {
        switch outcome {
        case .user(let identity):
            return .valid(appID: identity.uid, acceptedUntil: identity.acceptedUntil ?? 0)
        case .expired:
            return .expired
        case .invalid(let reason):
            return .invalid(reason: reason)
        case .admin:
            return .invalid(reason: "not an App Check token")
        }
    }
}
