import Auth
import DataModel
import JWTKit
import Testing

@Suite("Claim checks on signed tokens")
struct ClaimTests {
    /// An HS256 verifier with `configuration`'s claim settings.
    private func verify(
        _ claims: String, audience: String? = nil, issuer: String? = nil,
        skew: Double = AuthConfiguration.defaultClockSkewSeconds
    ) async throws -> AuthOutcome {
        let verifier = try makeVerifier(
            AuthConfiguration(hs256Secret: testSecret, audience: audience, issuer: issuer, clockSkewSeconds: skew))
        let token = try mint(claims, signer: try await Signers.make().hs256)
        return verifier.verify(token, now: now)
    }

    @Test("exp decides expiry, with the configured leeway", arguments: [
        (now - 3600, 60.0, false), (now - 61, 60, false), (now - 60, 60, false), (now - 59, 60, true),
        (now, 0, false), (now + 1, 0, true), (now + 0.5, 0, true),
    ])
    func expiry(exp: Double, skew: Double, accepted: Bool) async throws {
        let outcome = try await verify(#"{"sub":"alice","exp":\#(exp)}"#, skew: skew)
        if accepted {
            let identity = try #require(outcome.identity)
            #expect(identity.expiresAt == exp)
            #expect(identity.acceptedUntil == exp + skew)
        } else {
            #expect(outcome == .expired)
        }
    }

    @Test("a token without exp is accepted and never expires")
    func noExpiry() async throws {
        let identity = try #require(try await verify(#"{"sub":"alice"}"#).identity)
        #expect(identity.expiresAt == nil)
        #expect(identity.acceptedUntil == nil)
    }

    @Test("iat and nbf may not lie in the future beyond the leeway", arguments: [
        ("iat", now + 3600, false), ("iat", now + 61, false), ("iat", now + 60, true), ("iat", now - 600, true),
        ("nbf", now + 3600, false), ("nbf", now + 61, false), ("nbf", now + 60, true), ("nbf", now - 1, true),
    ])
    func notInTheFuture(claim: String, value: Double, accepted: Bool) async throws {
        let outcome = try await verify(#"{"sub":"alice","\#(claim)":\#(value),"exp":\#(now + 3600)}"#)
        #expect((outcome.identity != nil) == accepted, "\(outcome)")
    }

    @Test("time claims must be numbers", arguments: ["exp", "iat", "nbf"])
    func timeClaimTypes(claim: String) async throws {
        let outcome = try await verify(#"{"sub":"alice","\#(claim)":"tomorrow"}"#)
        #expect(outcome == .invalid(reason: "the \(claim) claim is not a number"))
    }

    @Test("a structurally bad token is invalid even when it has also expired")
    func invalidBeatsExpired() async throws {
        let outcome = try await verify(#"{"sub":"alice","aud":"other","exp":\#(now - 3600)}"#, audience: "my-project")
        #expect(outcome.isInvalid)
    }

    @Test("aud must name the configured audience", arguments: [
        (#""aud":"my-project","#, true), (#""aud":["other","my-project"],"#, true), (#""aud":"other","#, false),
        (#""aud":["other"],"#, false), (#""aud":[],"#, false), (#""aud":["my-project "],"#, false),
        (#""aud":"My-Project","#, false), (#""aud":7,"#, false), ("", false),
    ])
    func audience(member: String, accepted: Bool) async throws {
        let outcome = try await verify(#"{\#(member)"sub":"alice"}"#, audience: "my-project")
        if accepted {
            #expect(outcome.identity != nil)
        } else {
            #expect(outcome == .invalid(reason: "the aud claim does not name the configured audience"))
        }
    }

    @Test("iss must equal the configured issuer", arguments: [
        (#""iss":"https://securetoken.google.com/p","#, true), (#""iss":"https://securetoken.google.com/q","#, false),
        (#""iss":["https://securetoken.google.com/p"],"#, false), ("", false),
    ])
    func issuer(member: String, accepted: Bool) async throws {
        let outcome = try await verify(#"{\#(member)"sub":"alice"}"#, issuer: "https://securetoken.google.com/p")
        if accepted {
            #expect(outcome.identity != nil)
        } else {
            #expect(outcome == .invalid(reason: "the iss claim does not name the configured issuer"))
        }
    }

    @Test("aud and iss are not checked when not configured")
    func unconfiguredClaims() async throws {
        #expect(try await verify(#"{"sub":"alice","aud":"anything","iss":"anyone"}"#).identity != nil)
    }

    @Test("sub must be a non-empty string of at most 128 UTF-16 code units", arguments: [
        (#"{"exp":1750003600}"#, "the sub claim is missing or not a string"),
        (#"{"sub":42}"#, "the sub claim is missing or not a string"),
        (#"{"sub":null}"#, "the sub claim is missing or not a string"),
        (#"{"sub":""}"#, "the sub claim is empty"),
        (#"{"sub":"\#(String(repeating: "a", count: 129))"}"#, "the sub claim is longer than 128 characters"),
        (#"{"sub":"\#(String(repeating: "😀", count: 65))"}"#, "the sub claim is longer than 128 characters"),
    ])
    func badSubject(claims: String, reason: String) async throws {
        #expect(try await verify(claims) == .invalid(reason: reason))
    }

    @Test("sub at the length limit is accepted", arguments: [String(repeating: "a", count: 128), String(repeating: "😀", count: 64)])
    func longestSubject(subject: String) async throws {
        #expect(try await verify(#"{"sub":"\#(subject)"}"#).identity?.uid == subject)
    }

    @Test("a Firebase ID token's claims become the rules' auth variable")
    func firebaseClaims() async throws {
        let claims = #"""
            {"iss":"https://securetoken.google.com/p","aud":"p","auth_time":1749999000,"user_id":"u1","sub":"u1",\#
            "iat":1749999940,"exp":1750003540,"email":"a@example.com","email_verified":true,\#
            "firebase":{"identities":{"email":["a@example.com"]},"sign_in_provider":"password"},"role":"editor"}
            """#
        let identity = try #require(try await verify(claims, audience: "p", issuer: "https://securetoken.google.com/p").identity)
        let expected = try JSONReader.readValue(Array(claims.utf8))
        #expect(identity.uid == "u1")
        #expect(identity.provider == "password")
        #expect(identity.claims == expected)
        #expect(identity.ruleVariable == .object([("uid", .string("u1")), ("provider", .string("password")), ("token", expected)]))
        #expect(identity.ruleVariable["token"]?["role"] == .string("editor"))
    }

    @Test("without firebase.sign_in_provider the auth variable has no provider")
    func noProvider() async throws {
        let identity = try #require(try await verify(#"{"sub":"svc","firebase":{"sign_in_provider":7}}"#).identity)
        #expect(identity.provider == nil)
        #expect(identity.ruleVariable["provider"] == nil)
        #expect(identity.ruleVariable["uid"] == .string("svc"))
    }
}
