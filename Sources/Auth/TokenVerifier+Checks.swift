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
        if let accepted = policy.algorithms, !accepted.contains(algorithm) {
            let names = accepted.map(\.rawValue).sorted().joined(separator: " or ")
            throw TokenRejection("the token's alg is \(algorithm.rawValue); \(policy.kind)s are signed with \(names) only")
        }
        guard !keys.isEmpty || remoteKeys != nil else {
            throw TokenRejection(
                "no verification key is configured (no HS256 secret, no public key file), so no signed token is "
                    + "accepted")
        }
        let keyID: String?
        if let value = token.header["kid"] {
            guard let text = value.stringValue else { throw TokenRejection("the header's kid is not a string") }
            keyID = text
        } else {
            keyID = nil
        }
        if policy.requiresKeyID, keyID == nil {
            throw TokenRejection("the header names no key (kid), which \(policy.kind)s must")
        }
        let held = keys.filter { $0.algorithm == algorithm }
        let fetched = remoteKeys.map { $0.keys.filter { $0.algorithm == algorithm } } ?? []
        let verifies = { (key: VerificationKey) in key.accepts(signature: token.signature, of: token.signingInput) }
        guard let keyID else {
            let candidates = held + fetched
            if candidates.isEmpty {
                if let remoteKeys { throw .unknownKey(nil, noFetchedKeysReason(remoteKeys, algorithm: algorithm)) }
                throw TokenRejection("no \(algorithm.rawValue) key is configured")
            }
            guard candidates.contains(where: verifies) else {
                throw TokenRejection("the signature does not verify with any configured \(algorithm.rawValue) key")
            }
            return true
        }
        let named = (held + fetched).filter { Self.sameCodeUnits($0.keyID, keyID) }
        if !named.isEmpty {
            guard named.contains(where: verifies) else {
                throw TokenRejection("the signature does not verify with any configured \(algorithm.rawValue) key")
            }
            return true
        }
        // Keys without an id (the secret, PEM keys) are tried for a kid no key has, unless the kid must name one.
        let unnamed = policy.requiresKeyID ? [] : held.filter { $0.keyID == nil }
        if unnamed.contains(where: verifies) { return true }
        if let remoteKeys {
            let reason = fetched.isEmpty && remoteKeys.keys.isEmpty
                ? noFetchedKeysReason(remoteKeys, algorithm: algorithm)
                : "no current \(algorithm.rawValue) key has the token's kid \(Self.quoted(keyID)) (keys from "
                    + "\(remoteKeys.source.url))"
            throw .unknownKey(keyID, reason)
        }
        if held.isEmpty { throw TokenRejection("no \(algorithm.rawValue) key is configured") }
        if unnamed.isEmpty {
            throw TokenRejection("no configured \(algorithm.rawValue) key has the token's kid")
        }
        throw TokenRejection("the signature does not verify with any configured \(algorithm.rawValue) key")
    }

    /// Why a token cannot be checked while no keys were fetched.
    private func noFetchedKeysReason(_ remoteKeys: RemoteKeySet, algorithm: SignatureAlgorithm) -> String {
        if remoteKeys.keys.isEmpty {
            let last = remoteKeys.lastError.map { " (last attempt: \($0))" } ?? ""
            return "no signing keys have been fetched from \(remoteKeys.source.url) yet\(last)"
        }
        return "no \(algorithm.rawValue) key was fetched from \(remoteKeys.source.url)"
    }

    /// A header value for the log: quoted, at most 64 characters, printable ASCII.
    static func quoted(_ text: String) -> String {
        let printable = text.unicodeScalars.prefix(64).map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" }
        return "\"" + String(printable) + (text.unicodeScalars.count > 64 ? "…" : "") + "\""
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
        // Firebase ID tokens always carry both; a token without exp would never expire (nor be revoked).
        guard let expiresAt = try time("exp", in: claims) else { throw TokenRejection("the exp claim is missing") }
        guard let issuedAt = try time("iat", in: claims) else { throw TokenRejection("the iat claim is missing") }
        let notBefore = try time("nbf", in: claims)
        let authTime = try time("auth_time", in: claims)
        if let issuer = policy.issuer {
            guard Self.sameCodeUnits(claims["iss"]?.stringValue, issuer) else {
                throw TokenRejection("the iss claim does not name the configured issuer")
            }
        }
        if let audience = policy.audience {
            try checkAudience(claims["aud"], expected: audience)
        }
        if issuedAt > now + skew {
            throw TokenRejection("the token was issued in the future (iat)")
        }
        if policy.requiresAuthTime, authTime == nil {
            throw TokenRejection("the auth_time claim is missing")
        }
        if let authTime, authTime > now + skew {
            throw TokenRejection("the user signed in in the future (auth_time)")
        }
        if let notBefore, notBefore > now + skew {
            throw TokenRejection("the token is not valid yet (nbf)")
        }
        // RFC 7519 §4.1.4: the current time must be before exp.
        let acceptedUntil = expiresAt + skew
        if now >= acceptedUntil {
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
