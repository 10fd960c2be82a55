import Auth
import Foundation
import JWTKit
import Synchronization
import Testing

/// A key document the tests publish, and how often it was fetched; the fetcher a ``RemoteKeySource`` uses.
final class PublishedKeys: Sendable {
    private struct State {
        var document: Result<FetchedKeyDocument, KeyDocumentFetchError> = .failure(KeyDocumentFetchError("nothing"))
        var fetches = 0
    }

    private let state = Mutex(State())

    /// Publishes `body` with `max-age`.
    func publish(_ body: String, maxAge: Double? = 3600) {
        state.withLock { $0.document = .success(FetchedKeyDocument(body: Array(body.utf8), maxAgeSeconds: maxAge)) }
    }

    /// Makes every fetch fail.
    func fail(_ reason: String) {
        state.withLock { $0.document = .failure(KeyDocumentFetchError(reason)) }
    }

    var fetches: Int {
        state.withLock { $0.fetches }
    }

    /// A source fetching from here.
    func source(minimumRefreshSeconds: Double = 0) -> RemoteKeySource {
        RemoteKeySource(url: "https://keys.example.test/certs", fetcher: { _ throws(KeyDocumentFetchError) in
            let document = self.state.withLock { state in
                state.fetches += 1
                return state.document
            }
            return try document.get()
        }, minimumRefreshSeconds: minimumRefreshSeconds)
    }
}

/// Verifies `token`, waiting for a key refresh when the verifier asks for one.
func verifyWaiting(_ verifier: TokenVerifier, _ token: String) async -> AuthOutcome {
    await withCheckedContinuation { continuation in
        let immediate = verifier.verifyOrAwaitKeys(token, now: now) {
            continuation.resume(returning: verifier.verify(token, now: now))
        }
        if let immediate { continuation.resume(returning: immediate) }
    }
}

/// Waits until `condition` holds (at most 5 s).
func eventually(_ condition: () -> Bool) async throws {
    for _ in 0..<500 where !condition() {
        try await Task.sleep(for: .milliseconds(10))
    }
    #expect(condition())
}

@Suite("Keys fetched from a URL")
struct RemoteKeyTests {
    let keys: KeyFixtures
    let project = "demo-canopy"

    init() throws {
        keys = try KeyFixtures.get()
    }

    /// Firebase ID-token claims for `uid` (issued a minute before the tests' "now"), with any member replaced.
    func firebaseClaims(_ uid: String = "alice", iss: String = "https://securetoken.google.com/demo-canopy",
                        aud: String = "demo-canopy", authTime: Int = 1_749_999_940) -> String
    {
        #"{"iss":"\#(iss)","aud":"\#(aud)","auth_time":\#(authTime),"sub":"\#(uid)","iat":1749999940,"exp":1750003600}"#
    }

    /// Google's format: key id to certificate.
    func certificateMap(_ entries: [(String, KeyFixtures.RSA)]) -> String {
        let members = entries.map { kid, key in
            "\"\(kid)\":\"\(key.certificatePEM.replacingOccurrences(of: "\n", with: "\\n"))\""
        }
        return "{" + members.joined(separator: ",") + "}"
    }

    func firebaseVerifier(_ published: PublishedKeys, minimumRefreshSeconds: Double = 0) throws -> TokenVerifier {
        try TokenVerifier(configuration: AuthConfiguration(
            firebaseProjectId: project, remoteKeys: published.source(minimumRefreshSeconds: minimumRefreshSeconds)))
    }

    @Test("Cache-Control max-age, no-cache and no-store")
    func cacheControl() {
        #expect(FetchedKeyDocument.maxAge(cacheControl: "public, max-age=19204, must-revalidate, no-transform") == 19_204)
        #expect(FetchedKeyDocument.maxAge(cacheControl: "MAX-AGE=5") == 5)
        #expect(FetchedKeyDocument.maxAge(cacheControl: "no-cache") == 0)
        #expect(FetchedKeyDocument.maxAge(cacheControl: "max-age=5, no-store") == 0)
        #expect(FetchedKeyDocument.maxAge(cacheControl: "public") == nil)
        #expect(FetchedKeyDocument.maxAge(cacheControl: "max-age=-1") == nil)
        #expect(FetchedKeyDocument.maxAge(cacheControl: "max-age=\"60\"") == 60)
        #expect(FetchedKeyDocument.maxAge(cacheControl: nil) == nil)
    }

    @Test("a Firebase ID token signed with a published key passes; a rotated-in key is fetched on first use")
    func rotation() async throws {
        let published = PublishedKeys()
        published.publish(certificateMap([("k1", keys.rsa)]))
        let verifier = try firebaseVerifier(published)
        let signers = try await Signers.make()
        let first = try mint(firebaseClaims(), signer: signers.rs256, kid: "k1")
        #expect(await verifyWaiting(verifier, first).identity?.uid == "alice")
        try await eventually { verifier.remoteKeyStatus?.keyCount == 1 }
        let fetched = published.fetches

        published.publish(certificateMap([("k1", keys.rsa), ("k2", keys.otherRSA)]))
        let second = try mint(firebaseClaims("bob"), signer: signers.otherRS256, kid: "k2")
        #expect(verifier.verifyOrAwaitKeys(second, now: now) { } == nil, "an unknown kid waits for a refresh")
        try await eventually { verifier.remoteKeyStatus?.keyCount == 2 }
        #expect(verifier.verify(second, now: now).identity?.uid == "bob")
        #expect(verifier.verify(first, now: now).identity?.uid == "alice")
        #expect(published.fetches == fetched + 1)
    }

    @Test("an unknown kid refreshes at most once per minimumRefreshSeconds")
    func rateLimited() async throws {
        let published = PublishedKeys()
        published.publish(certificateMap([("k1", keys.rsa)]))
        let verifier = try firebaseVerifier(published, minimumRefreshSeconds: 60)
        try await eventually { verifier.remoteKeyStatus?.keyCount == 1 }
        let signers = try await Signers.make()
        let stranger = try mint(firebaseClaims(), signer: signers.otherRS256, kid: "k9")
        let outcome = verifier.verifyOrAwaitKeys(stranger, now: now) { }
        #expect(outcome == .invalid(reason: #"no current RS256 key has the token's kid "k9" (keys from https://keys.example.test/certs)"#))
        #expect(published.fetches == 1)
    }

    @Test("a failed fetch keeps the cached keys and says why")
    func failureKeepsKeys() async throws {
        let published = PublishedKeys()
        published.publish(certificateMap([("k1", keys.rsa)]))
        let verifier = try firebaseVerifier(published)
        try await eventually { verifier.remoteKeyStatus?.keyCount == 1 }
        published.fail("connection refused")
        let signers = try await Signers.make()
        let stranger = try mint(firebaseClaims(), signer: signers.otherRS256, kid: "k2")
        #expect(await verifyWaiting(verifier, stranger).isInvalid)
        // At least the fetch the unknown kid asked for failed (a retry may have failed too on a slow machine).
        #expect((verifier.remoteKeyStatus?.failures ?? 0) >= 1)
        let known = try mint(firebaseClaims(), signer: signers.rs256, kid: "k1")
        #expect(verifier.verify(known, now: now).identity?.uid == "alice")
    }

    @Test("before any key was fetched, a token is refused with the fetch's error")
    func nothingFetched() async throws {
        let published = PublishedKeys()
        published.fail("no route to host")
        let verifier = try firebaseVerifier(published)
        let signers = try await Signers.make()
        let token = try mint(firebaseClaims(), signer: signers.rs256, kid: "k1")
        let reason = await verifyWaiting(verifier, token).reason ?? ""
        #expect(reason.hasPrefix("no signing keys have been fetched from https://keys.example.test/certs yet"), "\(reason)")
        #expect(reason.contains("no route to host"), "\(reason)")
    }

    @Test("Firebase's own rules: auth_time in the past, iss and aud of the project")
    func firebaseRules() async throws {
        let published = PublishedKeys()
        published.publish(certificateMap([("k1", keys.rsa)]))
        let verifier = try firebaseVerifier(published)
        try await eventually { verifier.remoteKeyStatus?.keyCount == 1 }
        let signers = try await Signers.make()
        let cases = [
            (firebaseClaims(authTime: 1_750_000_100), "the user signed in in the future (auth_time)"),
            (firebaseClaims(iss: "https://securetoken.google.com/other"), "the iss claim does not name the configured issuer"),
            (firebaseClaims(aud: "other"), "the aud claim does not name the configured audience"),
        ]
        for (claims, reason) in cases {
            #expect(verifier.verify(try mint(claims, signer: signers.rs256, kid: "k1"), now: now) == .invalid(reason: reason))
        }
    }

    @Test("Firebase tokens: RS256 with a kid only, and auth_time required")
    func firebaseHeader() async throws {
        let published = PublishedKeys()
        published.publish(certificateMap([("k1", keys.rsa)]))
        let verifier = try firebaseVerifier(published)
        try await eventually { verifier.remoteKeyStatus?.keyCount == 1 }
        let signers = try await Signers.make()
        #expect(verifier.verify(try mint(firebaseClaims(), signer: signers.rs256), now: now)
            == .invalid(reason: "the header names no key (kid), which Firebase ID tokens must"))
        #expect(verifier.verify(try mint(firebaseClaims(), signer: signers.es256, kid: "k1"), now: now)
            == .invalid(reason: "the token's alg is ES256; Firebase ID tokens are signed with RS256 only"))
        #expect(verifier.verify(try mint(firebaseClaims(), signer: signers.hs256, kid: "k1"), now: now)
            == .invalid(reason: "the token's alg is HS256; Firebase ID tokens are signed with RS256 only"))
        let noAuthTime = #"{"iss":"https://securetoken.google.com/demo-canopy","aud":"demo-canopy","sub":"a","#
            + #""iat":1749999940,"exp":1750003600}"#
        #expect(verifier.verify(try mint(noAuthTime, signer: signers.rs256, kid: "k1"), now: now)
            == .invalid(reason: "the auth_time claim is missing"))
    }

    @Test("settings that cannot work together are refused at start", arguments: [
        (AuthConfiguration(hs256Secret: testSecret, firebaseProjectId: "demo-canopy"), "remove auth.secret"),
        (AuthConfiguration(issuer: "https://securetoken.google.com/x", firebaseProjectId: "demo-canopy"),
         "auth.issuer must be https://securetoken.google.com/demo-canopy"),
        (AuthConfiguration(remoteKeys: PublishedKeys().source()), "auth.jwksURL needs"),
        (AuthConfiguration(firebaseProjectId: "demo-canopy"), "auth.firebaseProjectId needs the address of Google's keys"),
    ])
    func conflicts(configuration: AuthConfiguration, message: String) {
        let error = configurationError(configuration)
        #expect(error.map { "\($0)" }?.contains(message) == true, "\(String(describing: error))")
    }

    @Test("project ids and key URLs are checked")
    func badValues() {
        #expect(configurationError(AuthConfiguration(firebaseProjectId: "Has Spaces")) == .invalidProjectID("Has Spaces"))
        var configuration = AuthConfiguration(firebaseProjectId: "demo-canopy")
        configuration.remoteKeys = PublishedKeys().source()
        configuration.remoteKeys?.url = "http://keys.example.test/"
        #expect(configurationError(configuration) == .invalidKeyURL("http://keys.example.test/"))
    }

    @Test("an OpenID Connect issuer's JWKS: iss and aud required, RS256 and ES256")
    func openIDConnect() async throws {
        let published = PublishedKeys()
        let rsa = #"{"kty":"RSA","kid":"r","n":"\#(keys.rsa.modulus)","e":"\#(keys.rsa.exponent)"}"#
        let ec = #"{"kty":"EC","crv":"P-256","kid":"e","x":"\#(keys.ec.x)","y":"\#(keys.ec.y)"}"#
        published.publish(#"{"keys":[\#(rsa),\#(ec)]}"#)
        let verifier = try TokenVerifier(configuration: AuthConfiguration(
            audience: "app", issuer: "https://idp.example.test", remoteKeys: published.source()))
        let signers = try await Signers.make()
        let claims = #"{"iss":"https://idp.example.test","aud":["app","other"],"sub":"u","iat":1749999940,"exp":1750003600}"#
        #expect(await verifyWaiting(verifier, try mint(claims, signer: signers.rs256, kid: "r")).identity?.uid == "u")
        #expect(await verifyWaiting(verifier, try mint(claims, signer: signers.es256, kid: "e")).identity?.uid == "u")
        let wrongAudience = claims.replacingOccurrences(of: #"["app","other"]"#, with: #""other""#)
        #expect(verifier.verify(try mint(wrongAudience, signer: signers.rs256, kid: "r"), now: now)
            == .invalid(reason: "the aud claim does not name the configured audience"))
    }

    @Test("App Check tokens: iss and aud of the project number, RS256 with a kid")
    func appCheck() async throws {
        let published = PublishedKeys()
        published.publish(#"{"keys":[{"kty":"RSA","kid":"a","alg":"RS256","use":"sig","n":"\#(keys.rsa.modulus)","e":"\#(keys.rsa.exponent)"}]}"#)
        let verifier = try AppCheckVerifier(projectNumber: "1234", keys: published.source())
        let signers = try await Signers.make()
        func claims(iss: String = "https://firebaseappcheck.googleapis.com/1234", aud: String = #"["projects/1234","projects/demo"]"#) -> String {
            #"{"iss":"\#(iss)","aud":\#(aud),"sub":"1:1234:web:ab","iat":1749999940,"exp":1750003600}"#
        }
        let valid = try mint(claims(), signer: signers.rs256, kid: "a")
        let outcome = await withCheckedContinuation { continuation in
            let immediate = verifier.verifyOrAwaitKeys(valid, now: now) {
                continuation.resume(returning: verifier.verify(valid, now: now))
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
        #expect(outcome == .valid(appID: "1:1234:web:ab", acceptedUntil: 1_750_003_600 + 60))
        #expect(verifier.verify(try mint(claims(iss: "https://firebaseappcheck.googleapis.com/9"), signer: signers.rs256, kid: "a"), now: now)
            == .invalid(reason: "the iss claim does not name the configured issuer"))
        #expect(verifier.verify(try mint(claims(aud: #"["projects/demo"]"#), signer: signers.rs256, kid: "a"), now: now)
            == .invalid(reason: "the aud claim does not name the configured audience"))
        #expect(verifier.verify(try mint(claims(), signer: signers.rs256, kid: "a"), now: 1_750_003_700) == .expired)
        #expect(verifier.verify("owner", now: now).isInvalidAppCheck, "no admin credential for App Check")
        #expect(throws: AuthConfigurationError.invalidProjectNumber("12a")) {
            try AppCheckVerifier(projectNumber: "12a", keys: published.source())
        }
    }
}

extension AppCheckOutcome {
    var isInvalidAppCheck: Bool {
        if case .invalid = self { return true }
        return false
    }
}
