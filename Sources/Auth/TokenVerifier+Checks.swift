import DataModel

extension TokenVerifier {
    // MARK: - Signature

    /// Checks the header and signature of `token`.
    ///
    /// - Returns: `true` for a signed token that one of our keys verifies, `false` for an unsigned token accepted in
    ///   emulator mode.
    /// - Throws: ``TokenRejection`` for everything else.
    func checkSignature(of token: CompactJWS) throws(TokenRejection) -> Bool {
        // RFC 7515 §4.1.11: a recipient that does not understand a listed critical extension must reject the JWS,
        // and this server understands none.
        guard token.header["crit"] == nil else {
            throw TokenRejection("the header lists critical extensions (crit), which this server does not support")
        }
        guard let algorithmName = token.header["alg"]?.stringValue else {
            throw TokenRejection("the header has no alg string")
        }
        if algorithmName == "none" {
            guard configuration.allowUnsignedTokens else {
                throw TokenRejection("unsigned tokens (alg none) are not accepted")
            }
            guard token.signature.isEmpty else {
                throw TokenRejection("an unsigned token (alg none) must have an empty signature")
            }
            return false
        }
        guard let algorithm = SignatureAlgorithm(rawValue: algorithmName) else {
            throw TokenRejection("the token's alg is not supported (HS256, RS256 and ES256 are)")
        }
        guard !keys.isEmpty else {
            throw TokenRejection(
                "no verification key is configured (no HS256 secret, no public key file), so no signed token is "
                    + "accepted")
        }
        let candidates = try candidateKeys(for: algorithm, keyID: token.header["kid"])
        guard candidates.contains(where: { $0.accepts(signature: token.signature, of: token.signingInput) }) else {
            throw TokenRejection("the signature does not verify with any configured \(algorithm.rawValue) key")
        }
        return true
    }

    /// The keys to try: those for `algorithm` with the token's `kid` if any has it, otherwise those without a key id
    /// (the secret, PEM keys); all keys for `algorithm` when the token names no `kid`.
    private func candidateKeys(
        for algorithm: SignatureAlgorithm, keyID: JSONValue?
    ) throws(TokenRejection) -> [VerificationKey] {
        let forAlgorithm = keys.filter { $0.algorithm == algorithm }
        guard !forAlgorithm.isEmpty else {
            throw TokenRejection("no \(algorithm.rawValue) key is configured")
        }
        guard let keyID else { return forAlgorithm }
        guard let wanted = keyID.stringValue else { throw TokenRejection("the header's kid is not a string") }
        let named = forAlgorithm.filter { Self.sameCodeUnits($0.keyID, wanted) }
        if !named.isEmpty { return named }
        let unnamed = forAlgorithm.filter { $0.keyID == nil }
        guard !unnamed.isEmpty else {
            throw TokenRejection("no configured \(algorithm.rawValue) key has the token's kid")
        }
        return unnamed
    }

    // MARK: - Claims

    /// Checks the claims and builds the outcome.
    ///
    /// Signed tokens get every check; unsigned ones (emulator mode) only the `sub` check, because the emulator's mock
    /// tokens carry `iat` 0, `exp` 3600 and a demo project's `aud`/`iss`.
    func identity(from claims: JSONValue, signed: Bool, now: Double) throws(TokenRejection) -> AuthOutcome {
        guard case .string(let subject)? = claims["sub"] else {
            throw TokenRejection("the sub claim is missing or not a string")
        }
        guard !subject.isEmpty else { throw TokenRejection("the sub claim is empty") }
        guard subject.utf16.count <= Self.maxSubjectLength else {
            throw TokenRejection("the sub claim is longer than \(Self.maxSubjectLength) characters")
        }
        let provider = claims["firebase"]?["sign_in_provider"]?.stringValue
        guard signed else {
            return .user(
                AuthIdentity(uid: subject, provider: provider, claims: claims, expiresAt: nil, acceptedUntil: nil))
        }

        let skew = configuration.clockSkewSeconds
        let expiresAt = try time("exp", in: claims)
        let issuedAt = try time("iat", in: claims)
        let notBefore = try time("nbf", in: claims)
        if let audience = configuration.audience {
            try checkAudience(claims["aud"], expected: audience)
        }
        if let issuer = configuration.issuer {
            guard Self.sameCodeUnits(claims["iss"]?.stringValue, issuer) else {
                throw TokenRejection("the iss claim does not name the configured issuer")
            }
        }
        if let issuedAt, issuedAt > now + skew {
            throw TokenRejection("the token was issued in the future (iat)")
        }
        if let notBefore, notBefore > now + skew {
            throw TokenRejection("the token is not valid yet (nbf)")
        }
        // RFC 7519 §4.1.4: the current time must be before exp.
        let acceptedUntil = expiresAt.map { $0 + skew }
        if let acceptedUntil, now >= acceptedUntil {
            return .expired
        }
        return .user(
            AuthIdentity(
                uid: subject, provider: provider, claims: claims, expiresAt: expiresAt, acceptedUntil: acceptedUntil))
    }

    /// A NumericDate claim (RFC 7519 §2) in seconds, `nil` when absent.
    private func time(_ name: String, in claims: JSONValue) throws(TokenRejection) -> Double? {
        guard let value = claims[name] else { return nil }
        guard let seconds = value.numberValue else { throw TokenRejection("the \(name) claim is not a number") }
        return seconds
    }

    /// RFC 7519 §4.1.3: `aud` is a string or an array of strings, one of which must be ours.
    private func checkAudience(_ audience: JSONValue?, expected: String) throws(TokenRejection) {
        switch audience {
        case .string(let single)? where Self.sameCodeUnits(single, expected):
            return
        case .array(let many)? where many.contains(where: { Self.sameCodeUnits($0.stringValue, expected) }):
            return
        default:
            throw TokenRejection("the aud claim does not name the configured audience")
        }
    }

    /// Exact comparison, by UTF-8 code units (JWT claim and key-id comparisons are case- and form-sensitive);
    /// `nil` (a missing or non-string value) equals nothing.
    static func sameCodeUnits(_ lhs: String?, _ rhs: String) -> Bool {
        guard let lhs else { return false }
        return lhs.utf8.elementsEqual(rhs.utf8)
    }
}
