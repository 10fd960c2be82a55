/// What a ``TokenVerifier`` accepts: verification keys, expected claims, the admin credential and test modes.
///
/// Every property is optional or has a conservative default; an empty configuration accepts no JWT at all and has no
/// admin credential.
public struct AuthConfiguration: Sendable {
    /// The HS256 shared secret (its UTF-8 bytes are the key), or `nil` to refuse HS256 tokens.
    ///
    /// Must be at least ``minimumHS256SecretBytes`` bytes long: RFC 7518 §3.2 requires an HMAC key at least as long
    /// as the hash output.
    public var hs256Secret: String?

    /// A file holding RS256/ES256 verification keys, or `nil` for none.
    ///
    /// The format is detected by content: PEM (one or more `PUBLIC KEY`, `RSA PUBLIC KEY` or `CERTIFICATE` blocks,
    /// RSA keys of at least 2048 bits or P-256 keys), a JWKS (`{"keys":[…]}`, RFC 7517 §5), or Google's certificate
    /// map (`{"<kid>":"-----BEGIN CERTIFICATE-----…"}`, the format Firebase publishes its ID-token certificates in).
    public var publicKeysPath: String?

    /// When set, the token's `aud` must equal it (or, when `aud` is an array, contain it) — RFC 7519 §4.1.3.
    /// Firebase ID tokens carry the project id here.
    public var audience: String?

    /// When set, the token's `iss` must equal it (RFC 7519 §4.1.1). Firebase ID tokens carry
    /// `https://securetoken.google.com/<project-id>`.
    public var issuer: String?

    /// The Firebase project whose ID tokens are accepted, or `nil`.
    ///
    /// When set, Firebase's own ID-token rules apply to every token: RS256 only; `kid` names one of the keys
    /// published at ``remoteKeys`` (Google's certificates unless set); `iss` is
    /// `https://securetoken.google.com/<project>` and `aud` the project; `sub` is non-empty and at most 128
    /// characters; `iat` and `auth_time` are in the past and `exp` in the future, within ``clockSkewSeconds``.
    /// ``hs256Secret`` and ``publicKeysPath`` cannot be combined with it; ``issuer`` and ``audience``, when set,
    /// must say the same.
    public var firebaseProjectId: String?

    /// Signing keys fetched from a URL and kept fresh (``RemoteKeySource``), or `nil`.
    ///
    /// Required with ``firebaseProjectId`` (Google's certificates, ``RemoteKeySource/firebaseIDTokenCertificates``,
    /// or a mirror). Without it, it serves any OpenID Connect issuer's JWKS, and ``issuer`` and ``audience`` are
    /// required.
    public var remoteKeys: RemoteKeySource?

    /// A credential that grants admin access (security rules bypassed), or `nil` for none. Must not be empty.
    public var adminToken: String?

    /// A credential made afresh at each start for the web console's sign-in link, admin like ``adminToken``
    /// (`nil`: none).
    public var consoleCredential: String?

    /// Whether the server listens on loopback addresses only.
    ///
    /// When `true` and ``adminToken`` is `nil`, the Firebase emulator's literal admin credential `owner` (what
    /// `firebase-admin` sends to an emulator) is the admin credential. It is also required for
    /// ``allowUnsignedTokens``.
    public var listensOnLoopbackOnly: Bool

    /// Emulator test mode: accept unsigned tokens (`alg` `none`, empty signature) with their claims, as the Firebase
    /// emulator does with `mockUserToken`s (wire-protocol.md §6.2). Off by default; refused unless
    /// ``listensOnLoopbackOnly``.
    ///
    /// Unsigned tokens are checked for a valid `sub` only: the emulator's mock tokens default to `iat` 0 and `exp`
    /// 3600 (1970) and name a demo project, so time, audience and issuer checks would reject every one of them.
    public var allowUnsignedTokens: Bool

    /// Leeway for `exp`, `iat` and `nbf`, in seconds (default ``defaultClockSkewSeconds``).
    ///
    /// A token is accepted until `exp + clockSkewSeconds` and refused when `iat` or `nbf` is more than this far in
    /// the future, so ordinary clock drift between the token issuer and this server does not turn away fresh tokens.
    public var clockSkewSeconds: Double

    /// Default ``clockSkewSeconds``: one minute, enough for NTP-synchronised clocks, small next to the one-hour
    /// lifetime of Firebase ID tokens.
    public static let defaultClockSkewSeconds: Double = 60

    /// Shortest accepted ``hs256Secret``: 32 bytes, the SHA-256 output size (RFC 7518 §3.2).
    public static let minimumHS256SecretBytes = 32

    /// The credential that means admin on a loopback-only server without a configured admin token (the Firebase
    /// emulator's convention, wire-protocol.md §6.2).
    public static let emulatorOwnerCredential = "owner"

    /// Creates a configuration; the defaults accept no token and grant no admin access.
    public init(
        hs256Secret: String? = nil, publicKeysPath: String? = nil, audience: String? = nil, issuer: String? = nil,
        adminToken: String? = nil, listensOnLoopbackOnly: Bool = false, allowUnsignedTokens: Bool = false,
        clockSkewSeconds: Double = AuthConfiguration.defaultClockSkewSeconds, firebaseProjectId: String? = nil,
        remoteKeys: RemoteKeySource? = nil
    ) {
        self.firebaseProjectId = firebaseProjectId
        self.remoteKeys = remoteKeys
        self.hs256Secret = hs256Secret
        self.publicKeysPath = publicKeysPath
        self.audience = audience
        self.issuer = issuer
        self.adminToken = adminToken
        self.listensOnLoopbackOnly = listensOnLoopbackOnly
        self.allowUnsignedTokens = allowUnsignedTokens
        self.clockSkewSeconds = clockSkewSeconds
    }
}
