import DataModel
import JWTKit

/// Turns the `cred` of an `auth`/`gauth` request into an ``AuthOutcome`` (wire-protocol.md §6.2).
///
/// Built once at start from an ``AuthConfiguration``: key files are read and every key is turned into a jwt-kit
/// signer then (see ``KeyRegistration``). ``verify(_:now:)`` is synchronous, never throws or traps, and touches no
/// shared mutable state, so any queue may call it concurrently.
///
/// What is accepted:
/// - the admin credential (``AuthConfiguration/adminToken``, or `owner` on a loopback-only server without one);
/// - a JWT whose `alg` is HS256 (with the configured secret), RS256 or ES256 (with the configured public keys) and
///   whose signature one of those keys verifies; a `kid` in the header selects the keys with that id (keys without an
///   id, such as PEM keys, are tried when none has it);
/// - with ``AuthConfiguration/allowUnsignedTokens``, a JWT with `alg` `none` and an empty signature.
///
/// Claims checked on signed tokens (RFC 7519 §4.1, Firebase's ID token rules): `sub` is a non-empty string of at most
/// ``maxSubjectLength`` UTF-16 code units; `exp`, `iat` and `nbf`, when present, are numbers, with `exp` in the
/// future and `iat`/`nbf` not in the future (each within ``AuthConfiguration/clockSkewSeconds``); `aud` and `iss`
/// match the configuration when it sets them. Unsigned tokens are checked for `sub` only.
///
/// With ``AuthConfiguration/firebaseProjectId`` or ``AuthConfiguration/remoteKeys`` the keys come from a URL, fetched
/// in the background and kept fresh (``RemoteKeySet``): ``verify(_:now:)`` still never waits, and
/// ``verifyOrAwaitKeys(_:now:then:)`` tells a caller when a token names a key that a refresh may bring, so that it
/// can wait for the refresh without blocking anything.
public final class TokenVerifier: Sendable {
    /// Longest credential examined: 16 KiB. Firebase ID tokens are about 1 KiB and custom claims are limited to
    /// 1000 bytes, so anything near this is garbage or an attack.
    public static let maxCredentialBytes = 16 * 1024

    /// Longest `sub` accepted, in UTF-16 code units: Firebase's limit for user ids.
    public static let maxSubjectLength = 128

    /// The configuration this verifier was built from.
    public let configuration: AuthConfiguration

    /// The keys tokens are verified with, for the start-up log.
    public let loadedKeys: [VerificationKeyDescription]

    /// One note per key-file entry that was skipped (unsupported type, curve, algorithm or use), for the start-up log.
    public let ignoredKeys: [String]

    /// The verification keys read at start, immutable after init.
    let keys: [VerificationKey]

    /// Keys fetched from a URL and kept fresh, when configured.
    let remoteKeys: RemoteKeySet?

    /// The header and claim rules (generic, Firebase ID token, OpenID Connect issuer, App Check).
    let policy: TokenPolicy

    /// The admin credential's UTF-8 bytes, or `nil` when there is none.
    let adminCredential: [UInt8]?

    /// Reads the key file (if any) and prepares every key.
    ///
    /// - Throws: ``AuthConfigurationError`` naming the problem (and the file, for key-file problems).
    public init(configuration: AuthConfiguration) throws(AuthConfigurationError) {
        let skew = configuration.clockSkewSeconds
        guard skew.isFinite, skew >= 0 else { throw .invalidClockSkew(skew) }
        if configuration.allowUnsignedTokens, !configuration.listensOnLoopbackOnly {
            throw .unsignedTokensRequireLoopback
        }
        if let adminToken = configuration.adminToken {
            guard !adminToken.isEmpty else { throw .invalidAdminToken(reason: "it is empty") }
            guard adminToken.utf8.count <= Self.maxCredentialBytes else {
                throw .invalidAdminToken(reason: "it is longer than \(Self.maxCredentialBytes) bytes")
            }
            adminCredential = Array(adminToken.utf8)
        } else if configuration.listensOnLoopbackOnly {
            adminCredential = Array(AuthConfiguration.emulatorOwnerCredential.utf8)
        } else {
            adminCredential = nil
        }

        var parsedKeys: [ParsedKey] = []
        if let secret = configuration.hs256Secret {
            let byteCount = secret.utf8.count
            guard byteCount >= AuthConfiguration.minimumHS256SecretBytes else {
                throw .secretTooShort(byteCount: byteCount, minimum: AuthConfiguration.minimumHS256SecretBytes)
            }
            parsedKeys.append(ParsedKey(material: .hmac(HMACKey(from: secret)), keyID: nil, source: "HS256 secret"))
        }
        var ignoredKeys: [String] = []
        if let path = configuration.publicKeysPath {
            let contents = try KeyFileReader.read(path: path)
            parsedKeys += contents.keys
            ignoredKeys = contents.ignored
        }
        let keys = try KeyRegistration.register(parsedKeys)
        let (policy, remoteSource) = try TokenPolicy.derive(from: configuration)

        self.configuration = configuration
        self.keys = keys
        self.ignoredKeys = ignoredKeys
        self.policy = policy
        loadedKeys = keys.map {
            VerificationKeyDescription(algorithm: $0.algorithm.rawValue, keyID: $0.keyID, source: $0.source)
        }
        remoteKeys = try remoteSource.map { source throws(AuthConfigurationError) in
            try RemoteKeySet(source: source, label: "id-tokens")
        }
    }

    /// A verifier for App Check tokens: remote keys only, no admin credential.
    init(policy: TokenPolicy, remoteKeys source: RemoteKeySource, clockSkewSeconds: Double, label: String)
        throws(AuthConfigurationError)
    {
        guard clockSkewSeconds.isFinite, clockSkewSeconds >= 0 else { throw .invalidClockSkew(clockSkewSeconds) }
        configuration = AuthConfiguration(clockSkewSeconds: clockSkewSeconds)
        keys = []
        loadedKeys = []
        ignoredKeys = []
        adminCredential = nil
        self.policy = policy
        remoteKeys = try RemoteKeySet(source: source, label: label)
    }

    /// The state of the fetched keys, when keys come from a URL.
    public var remoteKeyStatus: RemoteKeyStatus? {
        remoteKeys?.status
    }

    /// Checks one credential.
    ///
    /// - Parameters:
    ///   - credential: the `cred` of an `auth`/`gauth` request: the admin credential or a JWT.
    ///   - now: the current time in seconds since the epoch (a parameter so tests control it).
    /// - Returns: ``AuthOutcome/admin``, ``AuthOutcome/user(_:)``, ``AuthOutcome/expired`` or
    ///   ``AuthOutcome/invalid(reason:)``.
    public func verify(_ credential: String, now: Double) -> AuthOutcome {
        switch check(credential, now: now) {
        case .decided(let outcome): return outcome
        case .unknownKey(_, let reason): return .invalid(reason: reason)
        }
    }

    /// Checks one credential like ``verify(_:now:)``, unless the token names a key the fetched keys lack and a
    /// refresh of them may bring it (a key Google just rotated in): then the refresh starts (or is joined) and
    /// `then` is called, once, when it ended or after the fetch timeout, on a queue of the verifier's. The caller
    /// then calls ``verify(_:now:)``, whose answer is final.
    ///
    /// - Returns: the outcome, or `nil` when `then` will be called.
    public func verifyOrAwaitKeys(_ credential: String, now: Double, then: @escaping @Sendable () -> Void)
        -> AuthOutcome?
    {
        switch check(credential, now: now) {
        case .decided(let outcome): return outcome
        case .unknownKey(let keyID, let reason):
            guard let remoteKeys, remoteKeys.refresh(forUnknownKeyID: keyID, then: then) else {
                return .invalid(reason: reason)
            }
            return nil
        }
    }

    /// What ``check(_:now:)`` found.
    enum Check {
        case decided(AuthOutcome)
        /// The token names a key the fetched keys lack (or none were fetched yet).
        case unknownKey(keyID: String?, reason: String)
    }

    /// Checks one credential against the keys held now.
    func check(_ credential: String, now: Double) -> Check {
        let byteCount = credential.utf8.count
        guard byteCount > 0 else { return .decided(.invalid(reason: "the credential is empty")) }
        guard byteCount <= Self.maxCredentialBytes else {
            return .decided(.invalid(reason: "the credential is longer than \(Self.maxCredentialBytes) bytes"))
        }
        let bytes = Array(credential.utf8)
        if let adminCredential, Self.constantTimeEqual(bytes, adminCredential) {
            return .decided(.admin)
        }
        if let console = configuration.consoleCredential, Self.constantTimeEqual(bytes, Array(console.utf8)) {
            return .decided(.admin)
        }
        do throws(TokenRejection) {
            let token = try CompactJWS(bytes)
            let signed = try checkSignature(of: token)
            return .decided(try identity(from: token.claims, signed: signed, now: now))
        } catch {
            if error.unknownKey { return .unknownKey(keyID: error.keyID, reason: error.reason) }
            return .decided(.invalid(reason: error.reason))
        }
    }

    /// Compares a credential with the admin credential in time that depends only on the admin credential's length.
    static func constantTimeEqual(_ candidate: [UInt8], _ expected: [UInt8]) -> Bool {
        var difference: UInt8 = candidate.count == expected.count ? 0 : 1
        for (index, byte) in expected.enumerated() {
            difference |= byte ^ (index < candidate.count ? candidate[index] : 0)
        }
        return difference == 0
    }
}
