import Auth
import DataModel
import Testing

@Suite("Unsigned tokens (emulator test mode)")
struct UnsignedTokenTests {
    /// The claims the Firebase JS SDK's `createMockUserToken({sub: "alice"}, "demo-project")` produces.
    static let mockClaims = #"""
        {"iss":"https://securetoken.google.com/demo-project","aud":"demo-project","iat":0,"exp":3600,"auth_time":0,\#
        "sub":"alice","user_id":"alice","firebase":{"sign_in_provider":"custom","identities":{}}}
        """#

    /// A mock user token exactly as the SDK builds it: `<b64 header>.<b64 claims>.` with an empty signature.
    static let mockToken = base64URL(Array(#"{"alg":"none","type":"JWT"}"#.utf8)) + "." + base64URL(Array(mockClaims.utf8)) + "."

    @Test("the emulator's mock user token is accepted with its claims in unsigned mode")
    func mockUserToken() throws {
        let verifier = try makeVerifier(AuthConfiguration(listensOnLoopbackOnly: true, allowUnsignedTokens: true))
        let identity = try #require(verifier.verify(Self.mockToken, now: now).identity)
        #expect(identity.uid == "alice")
        #expect(identity.provider == "custom")
        #expect(identity.claims == (try JSONReader.readValue(Array(Self.mockClaims.utf8))))
        #expect(identity.expiresAt == nil, "the mock token's exp (3600) must not revoke it")
        #expect(identity.acceptedUntil == nil)
    }

    @Test("unsigned tokens are refused when unsigned mode is off", arguments: [false, true])
    func refusedByDefault(withSecret: Bool) throws {
        let verifier = try makeVerifier(AuthConfiguration(hs256Secret: withSecret ? testSecret : nil, listensOnLoopbackOnly: true))
        #expect(verifier.verify(Self.mockToken, now: now) == .invalid(reason: "unsigned tokens (alg none) are not accepted"))
    }

    @Test("an unsigned token must have an empty signature")
    func nonEmptySignature() throws {
        let verifier = try makeVerifier(AuthConfiguration(listensOnLoopbackOnly: true, allowUnsignedTokens: true))
        #expect(verifier.verify(Self.mockToken + "c2ln", now: now) == .invalid(reason: "an unsigned token (alg none) must have an empty signature"))
    }

    @Test("an unsigned token still needs a sub")
    func needsSubject() throws {
        let verifier = try makeVerifier(AuthConfiguration(listensOnLoopbackOnly: true, allowUnsignedTokens: true))
        let token = try mint(header: #"{"alg":"none"}"#, claims: #"{"user_id":"alice"}"#, signer: nil)
        #expect(verifier.verify(token, now: now) == .invalid(reason: "the sub claim is missing or not a string"))
    }

    @Test("signed tokens are still verified in unsigned mode")
    func signedStillVerified() async throws {
        let verifier = try makeVerifier(
            AuthConfiguration(hs256Secret: testSecret, listensOnLoopbackOnly: true, allowUnsignedTokens: true))
        let signers = try await Signers.make()
        #expect(verifier.verify(try mint(aliceClaims, signer: signers.hs256), now: now).identity?.uid == "alice")
        #expect(verifier.verify(try mint(aliceClaims, signer: signers.otherHS256), now: now).isInvalid)
        #expect(verifier.verify(try mint(#"{"sub":"alice","exp":1}"#, signer: signers.hs256), now: now) == .expired)
    }

    @Test("unsigned mode is refused unless the server listens on loopback only")
    func loopbackOnly() {
        #expect(configurationError(AuthConfiguration(allowUnsignedTokens: true)) == .unsignedTokensRequireLoopback)
    }
}
