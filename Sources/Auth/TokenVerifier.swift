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

    /// The verification keys, immutable after init.
    let keys: [VerificationKey]

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

        self.configuration = configuration
        self.keys = keys
        self.ignoredKeys = ignoredKeys
        loadedKeys = keys.map {
            VerificationKeyDescription(algorithm: $0.algorithm.rawValue, keyID: $0.keyID, source: $0.source)
        }
    }

    /// Checks one credential.
    ///
    /// - Parameters:
    ///   - credential: the `cred` of an `auth`/`gauth` request: the admin credential or a JWT.
    ///   - now: the current time in seconds since the epoch (a parameter so tests control it).
    /// - Returns: ``AuthOutcome/admin``, ``AuthOutcome/user(_:)``, ``AuthOutcome/expired`` or
    ///   ``AuthOutcome/invalid(reason:)``.
    public func verify(_ credential: String, now: Double) -> AuthOutcome {
        let byteCount = credential.utf8.count
        guard byteCount > 0 else { return .invalid(reason: "the credential is empty") }
        guard byteCount <= Self.maxCredentialBytes else {
            return .invalid(reason: "the credential is longer than \(Self.maxCredentialBytes) bytes")
        }
        let bytes = Array(credential.utf8)
        if let adminCredential, Self.constantTimeEqual(bytes, adminCredential) {
            return .admin
        }
        if let console = configuration.consoleCredential, Self.constantTimeEqual(bytes, Array(console.utf8)) {
            return .admin
        }
        do throws(TokenRejection) {
            let token = try CompactJWS(bytes)
            let signed = try checkSignature(of: token)
            return try identity(from: token.claims, signed: signed, now: now)
        } catch {
            return .invalid(reason: error.reason)
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
