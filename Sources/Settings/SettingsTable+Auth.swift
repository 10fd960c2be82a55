extension SettingsTable {
    /// How clients' tokens are verified (the README's Auth and Firebase Auth sections).
    public enum Auth {
        public static let secret = Setting<String?>(
            "auth.secret", default: nil, flag: "--auth-secret", doc: "HS256 secret for client tokens (≥ 32 bytes)")
        public static let publicKeys = Setting<String?>(
            "auth.publicKeys", default: nil, flag: "--auth-public-keys",
            doc: "RS256/ES256 keys: a PEM file or a JWKS file")
        public static let audience = Setting<String?>(
            "auth.audience", default: nil, flag: "--auth-audience", doc: "required `aud` claim")
        public static let issuer = Setting<String?>(
            "auth.issuer", default: nil, flag: "--auth-issuer", doc: "required `iss` claim")
        public static let adminToken = Setting<String?>(
            "auth.adminToken", default: nil, flag: "--admin-token",
            doc: "admin credential (rules bypassed); without it a loopback-only server accepts the emulator's `owner`")
        public static let allowUnsignedTokens = Setting(
            "auth.allowUnsignedTokens", default: false, flag: "--allow-unsigned-tokens",
            doc: "emulator test mode: accept unsigned (`alg: none`) tokens; loopback only")
        public static let clockSkewSeconds = Setting(
            "auth.clockSkewSeconds", default: 60.0, .range(0...3_600), flag: "--auth-clock-skew",
            doc: "leeway for token expiry and issue times")
        public static let firebaseProjectId = Setting<String?>(
            "auth.firebaseProjectId", default: nil, flag: "--auth-firebase-project",
            doc: "accept Firebase ID tokens of this project (Google's keys, fetched and kept fresh)")
        public static let jwksURL = Setting<String?>(
            "auth.jwksURL", default: nil, .httpsURL, flag: "--auth-jwks-url",
            doc: """
                fetch signing keys from this `https://` URL: an OpenID Connect issuer's JWKS (with `auth.issuer`, \
                `auth.audience`), or instead of Google's certificates
                """)
        public static let keysCAFile = Setting<String?>(
            "auth.keysCAFile", default: nil, flag: "--auth-keys-ca-file",
            doc: "extra CA certificates (PEM) trusted when fetching keys, besides the system's")
        public static let keysMinRefreshSeconds = Setting(
            "auth.keysMinRefreshSeconds", default: 30.0, .range(0...86_400),
            doc: "tokens naming an unknown key fetch the keys at most this often")
        public static let keysFetchTimeoutSeconds = Setting(
            "auth.keysFetchTimeoutSeconds", default: 10.0, .range(0.1...300), doc: "time one fetch of keys may take")

        static let all: [any AnySetting] = [
            secret, publicKeys, audience, issuer, adminToken, allowUnsignedTokens, clockSkewSeconds,
            firebaseProjectId, jwksURL, keysCAFile, keysMinRefreshSeconds, keysFetchTimeoutSeconds,
        ]
    }

    /// App Check (the README's App Check section).
    public enum AppCheck {
        public static let projectNumber = Setting<String?>(
            "appCheck.projectNumber", default: nil, .projectNumber, flag: "--app-check-project",
            readsNumbersAsText: true, doc: "verify App Check tokens of the Firebase project with this number")
        public static let mode = Setting(
            "appCheck.mode", default: "monitor", .oneOf(["off", "monitor", "enforce"]), flag: "--app-check-mode",
            doc: "`off`, `monitor` (count and log) or `enforce` (refuse data access without a valid token)")
        public static let jwksURL = Setting(
            "appCheck.jwksURL", default: "https://firebaseappcheck.googleapis.com/v1/jwks", .httpsURL,
            flag: "--app-check-jwks-url", doc: "where App Check's signing keys are published")

        static let all: [any AnySetting] = [projectNumber, mode, jwksURL]
    }
}
