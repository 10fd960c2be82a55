import Auth
import DataModel
import Testing

/// Tokens minted by PyJWT 2.15.1 (what the Python integration tests use), with the public halves of its throw-away
/// keys, so interoperability with a second JWT implementation does not depend on this module's own minting.
@Suite("Tokens from PyJWT")
struct PyJWTInteropTests {
    /// `jwt.encode(claims, "0123456789abcdef0123456789abcdef", algorithm="HS256")`.
    static let hs256 = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJweS11c2VyIiwiaWF0IjoxNzQ5OTk5OTQwLCJleHAiOjE3NTAwMDM2MDAsImF1ZCI6ImRlbW8iLCJpc3MiOiJodHRwczovL3NlY3VyZXRva2VuLmdvb2dsZS5jb20vZGVtbyIsImZpcmViYXNlIjp7InNpZ25faW5fcHJvdmlkZXIiOiJwYXNzd29yZCJ9LCJyb2xlcyI6WyJhIiwiYiJdfQ._CkrYEMCIPW99Pg2G2dj9AWzhf1AYxG7bqtHbA-bH5k"
    /// `jwt.encode(claims, rsa_private_pem, algorithm="RS256", headers={"kid": "py-rsa"})`.
    static let rs256 = "eyJhbGciOiJSUzI1NiIsImtpZCI6InB5LXJzYSIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJweS11c2VyIiwiaWF0IjoxNzQ5OTk5OTQwLCJleHAiOjE3NTAwMDM2MDAsImF1ZCI6ImRlbW8iLCJpc3MiOiJodHRwczovL3NlY3VyZXRva2VuLmdvb2dsZS5jb20vZGVtbyIsImZpcmViYXNlIjp7InNpZ25faW5fcHJvdmlkZXIiOiJwYXNzd29yZCJ9LCJyb2xlcyI6WyJhIiwiYiJdfQ.bx4JJNP5--oC_4Sc-rtRlFtIqvn86-niBo3dcrqHjoC_0p3V7CjV09_w_lXeieCyJrbXAVMLo0dorZTKlCbXLfx7iIHixsDhMbA35sd_RZaQO5rtlmZNs76xY22ptHHZOCBU7_7GgKqMF6nDxkHBtG2gAitBsfgUqlyK8zwyzrzCLFxyHB8stm8jyn5CT8Ywjf6lyuC07lqAfId3vsRfxNf8etcTG7gkBmTe5g_2kBy1kG2ReC2DC3cf2CXyWV0gKTwEmYUftUfdhn53FNmG8-vauFKBLR_q6k71P2RmY7TFDUkMlr8F9n-Ifu2cTuTBudcvIh3j-Tde-crb3AtFgA"
    /// `jwt.encode(claims, ec_private_pem, algorithm="ES256")`.
    static let es256 = "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJweS11c2VyIiwiaWF0IjoxNzQ5OTk5OTQwLCJleHAiOjE3NTAwMDM2MDAsImF1ZCI6ImRlbW8iLCJpc3MiOiJodHRwczovL3NlY3VyZXRva2VuLmdvb2dsZS5jb20vZGVtbyIsImZpcmViYXNlIjp7InNpZ25faW5fcHJvdmlkZXIiOiJwYXNzd29yZCJ9LCJyb2xlcyI6WyJhIiwiYiJdfQ.dAw-PvvFTsRxvcwWlfAAZkbRQpx8OuGdNArNiQo9iYigvlbJh7Fj399bhvlA4w404R1YrnwDwHHX-gmMH-E-Tg"
    /// The public keys of the RS256 and ES256 tokens' signing keys.
    static let publicKeys = """
        -----BEGIN PUBLIC KEY-----
        MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAs2HXv1QGsyBPbyL+CvdC
        z4UOKhi+1+q0QgmZfe2TgK0hmS9zSigAfeRUlxyJsT4aY0bYYEv78tW8+bNSr6ba
        mg3UAwNZx4dyb9D6z34MZF2/pAKz8n8vH4Tq/ls90ZAPa9ev4e+C/0vkXZPfcblY
        Ov0Qgu9RK7uZh8B8dRDUaum4xaDGdElQBxhF/JPaBGeK38dnufHWaVnHhNlh7aBO
        LBAH4YSTrZh3oRnBop7LquQCdxELV43W+SRqweizVx/BeXqeU9+V6VuBb7eXHpVH
        X1GEeUHo0jMqJ0VE+VIN2EO7QYq1i2VL7Ruk7Y+bsBuDmU/SGqOkHUCkI+8Q49oU
        iQIDAQAB
        -----END PUBLIC KEY-----
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEdTcj9dmqpt7FeZnSxpXjMbDqOJCn
        M4psps2aE+aAo8PT0hEraLHTcWDQKDRtK8hIPh+SoUS1mu9rmE7ohmE25g==
        -----END PUBLIC KEY-----
        """

    @Test("PyJWT's HS256, RS256 and ES256 tokens verify with their claims", arguments: [hs256, rs256, es256])
    func verifies(token: String) throws {
        let verifier = try makeVerifier(
            AuthConfiguration(hs256Secret: testSecret, audience: "demo", issuer: "https://securetoken.google.com/demo"),
            keyFile: Self.publicKeys)
        let identity = try #require(verifier.verify(token, now: now).identity)
        #expect(identity.uid == "py-user")
        #expect(identity.provider == "password")
        #expect(identity.claims["roles"] == .array([.string("a"), .string("b")]))
        #expect(identity.expiresAt == 1_750_003_600)
        #expect(verifier.verify(token, now: 1_750_003_600 + AuthConfiguration.defaultClockSkewSeconds) == .expired)
    }
}
