import Auth
import JWTKit
import Testing

@Suite("Malformed credentials")
struct MalformedTokenTests {
    private let verifier: TokenVerifier

    init() throws {
        verifier = try makeVerifier(AuthConfiguration(hs256Secret: testSecret))
    }

    /// `text` base64url-encoded.
    private func b64(_ text: String) -> String {
        base64URL(Array(text.utf8))
    }

    @Test("credentials that are not three dot-separated parts are refused", arguments: [
        ("abc", 1), ("a.b", 2), ("a.b.c.d", 4), ("....", 5), (".", 2), ("owner.", 2),
    ])
    func partCount(credential: String, parts: Int) {
        #expect(verifier.verify(credential, now: now) == .invalid(reason: "not a JWT: expected 3 dot-separated parts, found \(parts)"))
    }

    @Test("an empty credential is refused")
    func empty() {
        #expect(verifier.verify("", now: now) == .invalid(reason: "the credential is empty"))
    }

    @Test("segments that are not canonical unpadded base64url are refused", arguments: [
        "..", "!!!.eyJ9.", "eyJhbGciOiJIUzI1NiJ9=.eyJ9.", "eyJhbGciOiJIUzI1NiJ9.e.", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.a",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.++//", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn1.",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.AB", "eyJhbGciOiJIUzI1NiJ9 .eyJzdWIiOiJhIn0.",
    ])
    func badBase64(credential: String) {
        #expect(verifier.verify(credential, now: now).isInvalid)
    }

    @Test("header and payload must be JSON objects", arguments: [
        ("{", #"{"sub":"a"}"#, "the header is not valid JSON"), ("[]", #"{"sub":"a"}"#, "the header is not a JSON object"),
        (#"{"alg":"HS256"}"#, "{\"sub\":", "the payload is not valid JSON"),
        (#"{"alg":"HS256"}"#, #"["sub"]"#, "the payload is not a JSON object"),
        (#"{"alg":"HS256"}"#, "\"alice\"", "the payload is not a JSON object"),
        (#"{"alg":"HS256"}"#, #"{"sub":"a"} x"#, "the payload is not valid JSON"),
        (#"{"alg":"HS256"}"#, "{\"sub\":\"\u{7}\"}", "the payload is not valid JSON"),
    ])
    func notJSONObjects(header: String, claims: String, reason: String) throws {
        let token = try mint(header: header, claims: claims, signer: nil)
        let actual = try #require(verifier.verify(token, now: now).reason)
        #expect(actual.hasPrefix(reason), "\(actual)")
    }

    @Test("invalid UTF-8 inside the payload is refused")
    func invalidUTF8() {
        let claims = base64URL([UInt8(ascii: "{"), UInt8(ascii: "\""), 0xFF, UInt8(ascii: "\""), UInt8(ascii: ":"), UInt8(ascii: "1"), UInt8(ascii: "}")])
        #expect(verifier.verify("\(b64(#"{"alg":"HS256"}"#)).\(claims).", now: now).isInvalid)
    }

    @Test("deeply nested claims are refused without trouble, even when correctly signed")
    func deepNesting() async throws {
        let claims = #"{"sub":"a","x":"# + String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000) + "}"
        let token = try mint(claims, signer: try await Signers.make().hs256)
        let reason = try #require(verifier.verify(token, now: now).reason)
        #expect(reason.hasPrefix("the payload is not valid JSON (nestingTooDeep"), "\(reason)")
    }

    @Test("header problems are refused", arguments: [
        (#"{"typ":"JWT"}"#, "the header has no alg string"), (#"{"alg":256}"#, "the header has no alg string"),
        (#"{"alg":"HS256","crit":["exp"]}"#, "the header lists critical extensions (crit), which this server does not support"),
        (#"{"alg":"HS256","kid":7}"#, "the header's kid is not a string"),
    ])
    func headerProblems(header: String, reason: String) async throws {
        let token = try mint(header: header, claims: aliceClaims, signer: try await Signers.make().hs256)
        #expect(verifier.verify(token, now: now) == .invalid(reason: reason))
    }

    @Test("credentials over 16 KiB are refused before any parsing; 16 KiB exactly is parsed")
    func size() throws {
        let limit = TokenVerifier.maxCredentialBytes
        #expect(verifier.verify(String(repeating: "a", count: limit + 1), now: now) == .invalid(reason: "the credential is longer than 16384 bytes"))
        #expect(verifier.verify(String(repeating: "a", count: limit), now: now) == .invalid(reason: "not a JWT: expected 3 dot-separated parts, found 1"))
        let padding = String(repeating: "x", count: limit)
        let huge = try mint(header: #"{"alg":"HS256"}"#, claims: #"{"sub":"a","pad":"\#(padding)"}"#, signer: nil)
        #expect(verifier.verify(huge, now: now) == .invalid(reason: "the credential is longer than 16384 bytes"))
    }

    @Test("random strings over the token alphabet never pass and never crash")
    func randomCredentials() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ eyJ{}\"".utf8)
        var generator = SplitMix64(seed: 0x5EED_CAFE)
        for _ in 0..<2000 {
            let length = Int.random(in: 0...300, using: &generator)
            let bytes = (0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }
            let outcome = verifier.verify(String(decoding: bytes, as: UTF8.self), now: now)
            #expect(outcome.isInvalid, "\(outcome)")
        }
    }
}

/// A small seeded generator so the random test is reproducible (Steele, Lea and Flood's SplitMix64).
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
