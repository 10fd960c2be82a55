/// The header and claim rules a ``TokenVerifier`` applies to signed tokens, beyond the signature itself.
struct TokenPolicy: Sendable {
    /// The required `iss`, or `nil` for any.
    var issuer: String?
    /// The audience `aud` must be or contain, or `nil` for any.
    var audience: String?
    /// The accepted `alg` values, or `nil` for every algorithm a configured key verifies.
    var algorithms: Set<SignatureAlgorithm>?
    /// Whether the header must name its key (`kid`), which must then be one of the keys held now.
    var requiresKeyID = false
    /// Whether `auth_time` must be present (it is checked to be in the past whenever present).
    var requiresAuthTime = false
    /// What the tokens are, for messages: `token`, `Firebase ID token`, `App Check token`.
    var kind = "token"

    /// The issuer of Firebase ID tokens of `project`.
    static func firebaseIssuer(_ project: String) -> String {
        "https://securetoken.google.com/\(project)"
    }

    /// The policy and the remote key source an ``AuthConfiguration`` asks for, after checking the settings agree.
    static func derive(from configuration: AuthConfiguration) throws(AuthConfigurationError)
        -> (TokenPolicy, RemoteKeySource?)
    {
        if let project = configuration.firebaseProjectId {
            guard isProjectID(project) else { throw .invalidProjectID(project) }
            guard configuration.hs256Secret == nil, configuration.publicKeysPath == nil else {
                throw .conflictingSettings(
                    "auth.firebaseProjectId accepts Firebase ID tokens only (RS256, signed with the keys published at "
                        + "auth.jwksURL, Google's by default): remove auth.secret and auth.publicKeys")
            }
            let issuer = firebaseIssuer(project)
            if let configured = configuration.issuer, configured != issuer {
                throw .conflictingSettings(
                    "auth.issuer must be \(issuer) (or unset) with auth.firebaseProjectId \(project)")
            }
            if let configured = configuration.audience, configured != project {
                throw .conflictingSettings("auth.audience must be \(project) (or unset) with auth.firebaseProjectId")
            }
            let policy = TokenPolicy(
                issuer: issuer, audience: project, algorithms: [.rs256], requiresKeyID: true, requiresAuthTime: true,
                kind: "Firebase ID token")
            guard let source = configuration.remoteKeys else {
                throw .conflictingSettings(
                    "auth.firebaseProjectId needs the address of Google's keys (\(RemoteKeySource.firebaseIDTokenCertificates))")
            }
            return (policy, source)
        }
        if let source = configuration.remoteKeys {
            guard let issuer = configuration.issuer, !issuer.isEmpty,
                  let audience = configuration.audience, !audience.isEmpty
            else {
                throw .conflictingSettings(
                    "auth.jwksURL needs auth.issuer and auth.audience: without them, a token the issuer made for any "
                        + "other application would be accepted")
            }
            // Fetched keys are RSA or P-256 keys: HS256 only with a configured secret.
            let algorithms: Set<SignatureAlgorithm> = configuration.hs256Secret == nil
                ? [.rs256, .es256] : [.rs256, .es256, .hs256]
            return (TokenPolicy(issuer: issuer, audience: audience, algorithms: algorithms), source)
        }
        return (TokenPolicy(issuer: configuration.issuer, audience: configuration.audience), nil)
    }

    /// App Check tokens of the project numbered `number`: RS256 with a named key, `iss`
    /// `https://firebaseappcheck.googleapis.com/<number>`, `aud` containing `projects/<number>`.
    static func appCheck(projectNumber number: String) -> TokenPolicy {
        TokenPolicy(
            issuer: "https://firebaseappcheck.googleapis.com/\(number)", audience: "projects/\(number)",
            algorithms: [.rs256], requiresKeyID: true, requiresAuthTime: false, kind: "App Check token")
    }

    /// Firebase project ids: 6-30 of `a-z 0-9 -` in new projects; older and Google-internal ones may carry a
    /// domain prefix (`example.com:project`), so dots and a colon are allowed too, up to 128 characters.
    static func isProjectID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 128
            && id.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":")
            }
    }
}
