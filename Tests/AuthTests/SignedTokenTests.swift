import Auth
import DataModel
import Foundation
import JWTKit
import Testing

@Suite("Signed tokens")
struct SignedTokenTests {
    let keys: KeyFixtures

    init() throws {
        keys = try KeyFixtures.get()
    }

    /// A verifier with the HS256 secret and the RSA and P-256 public keys as PEM.
    private func verifier() throws -> TokenVerifier {
        try makeVerifier(AuthConfiguration(hs256Secret: testSecret), keyFile: keys.rsa.publicKeyPEM + keys.ec.publicKeyPEM)
    }

    /// The signer for `algorithm` (`other`: one the server does not know).
    private func signer(_ algorithm: String, other: Bool = false) async throws -> any JWTAlgorithm {
        let signers = try await Signers.make()
        switch algorithm {
        case "HS256": return other ? signers.otherHS256 : signers.hs256
        case "RS256": return other ? signers.otherRS256 : signers.rs256
        default: return other ? signers.otherES256 : signers.es256
        }
    }

    @Test("a valid token is accepted with its claims", arguments: ["HS256", "RS256", "ES256"])
    func validToken(algorithm: String) async throws {
        let token = try mint(aliceClaims, signer: try await signer(algorithm))
        let identity = try #require(try verifier().verify(token, now: now).identity)
        #expect(identity.uid == "alice")
        #expect(identity.provider == nil)
        #expect(identity.claims == .object([("sub", .string("alice")), ("iat", .number(1_749_999_940)), ("exp", .number(1_750_003_600))]))
        #expect(identity.expiresAt == 1_750_003_600)
        #expect(identity.acceptedUntil == 1_750_003_600 + AuthConfiguration.defaultClockSkewSeconds)
    }

    @Test("a token signed by a key the server does not know is refused", arguments: ["HS256", "RS256", "ES256"])
    func unknownKey(algorithm: String) async throws {
        let token = try mint(aliceClaims, signer: try await signer(algorithm, other: true))
        #expect(try verifier().verify(token, now: now) == .invalid(reason: "the signature does not verify with any configured \(algorithm) key"))
    }

    @Test("a signature moved onto other claims is refused", arguments: ["HS256", "RS256", "ES256"])
    func tamperedClaims(algorithm: String) async throws {
        let signer = try await signer(algorithm)
        let genuine = try mint(aliceClaims, signer: signer).split(separator: ".")
        let forged = try mint(aliceClaims.replacingOccurrences(of: "alice", with: "admin"), signer: signer).split(separator: ".")
        let token = "\(forged[0]).\(forged[1]).\(genuine[2])"
        #expect(try verifier().verify(token, now: now).isInvalid)
    }

    @Test("a missing, truncated or extended signature is refused", arguments: ["HS256", "RS256", "ES256"])
    func signatureLength(algorithm: String) async throws {
        let token = try mint(aliceClaims, signer: try await signer(algorithm))
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        let signature = Array(String(parts[2]).utf8)
        let verifier = try verifier()
        for broken in ["", String(decoding: signature.dropLast(4), as: UTF8.self), String(parts[2]) + "AAAA"] {
            #expect(verifier.verify("\(parts[0]).\(parts[1]).\(broken)", now: now).isInvalid)
        }
    }

    @Test("every single-character change to a valid token is refused", arguments: ["HS256", "RS256", "ES256"])
    func everyMutation(algorithm: String) async throws {
        let token = Array(try mint(aliceClaims, signer: try await signer(algorithm)).utf8)
        let verifier = try verifier()
        for index in token.indices {
            for replacement in [UInt8(ascii: "A"), UInt8(ascii: "-"), UInt8(ascii: ".")] where token[index] != replacement {
                var mutated = token
                mutated[index] = replacement
                let outcome = verifier.verify(String(decoding: mutated, as: UTF8.self), now: now)
                #expect(outcome.isInvalid, "position \(index) set to \(replacement) gave \(outcome)")
            }
        }
    }

    @Test("a token whose alg differs from its key's algorithm is refused")
    func algorithmMismatch() async throws {
        let signers = try await Signers.make()
        let verifier = try verifier()
        let esSignedAsRS = try mint(header: #"{"alg":"RS256"}"#, claims: aliceClaims, signer: signers.es256)
        let rsSignedAsES = try mint(header: #"{"alg":"ES256"}"#, claims: aliceClaims, signer: signers.rs256)
        let hsSignedAsRS = try mint(header: #"{"alg":"RS256"}"#, claims: aliceClaims, signer: signers.hs256)
        for token in [esSignedAsRS, rsSignedAsES, hsSignedAsRS] {
            #expect(verifier.verify(token, now: now).isInvalid)
        }
    }

    @Test("the RSA public key used as an HS256 secret does not verify (algorithm confusion)")
    func algorithmConfusion() async throws {
        let collection = JWTKeyCollection()
        await collection.add(hmac: HMACKey(from: keys.rsa.publicKeyPEM), digestAlgorithm: .sha256, kid: "pem")
        let forged = try mint(aliceClaims, signer: try await collection.getKey(for: "pem"))
        let verifier = try makeVerifier(keyFile: keys.rsa.publicKeyPEM)
        #expect(verifier.verify(forged, now: now) == .invalid(reason: "no HS256 key is configured"))
    }

    @Test("an unsupported alg is refused", arguments: ["RS384", "RS512", "PS256", "HS384", "HS512", "ES384", "EdDSA", "none ", "None"])
    func unsupportedAlgorithm(algorithm: String) throws {
        let token = try mint(header: #"{"alg":"\#(algorithm)"}"#, claims: aliceClaims, signer: nil) + "c2ln"
        #expect(try verifier().verify(token, now: now) == .invalid(reason: "the token's alg is not supported (HS256, RS256 and ES256 are)"))
    }

    @Test("without any key every JWT is refused, and the reason says so")
    func noKeys() async throws {
        let verifier = try makeVerifier()
        #expect(verifier.loadedKeys.isEmpty)
        let token = try mint(aliceClaims, signer: try await signer("HS256"))
        let reason = try #require(verifier.verify(token, now: now).reason)
        #expect(reason.contains("no verification key is configured"))
    }

    @Test("tokens made by jwt-kit's own serializer verify", arguments: ["HS256", "RS256", "ES256"])
    func jwtKitSerializer(algorithm: String) async throws {
        struct Payload: JWTPayload {
            var sub: SubjectClaim
            var iat: IssuedAtClaim
            var exp: ExpirationClaim
            var admin: Bool
            func verify(using algorithm: some JWTAlgorithm) throws {}
        }
        let collection = JWTKeyCollection()
        switch algorithm {
        case "HS256": await collection.add(hmac: HMACKey(from: testSecret), digestAlgorithm: .sha256)
        case "RS256": await collection.add(rsa: keys.rsa.privateKey, digestAlgorithm: .sha256)
        default: await collection.add(ecdsa: keys.ec.privateKey)
        }
        let payload = Payload(
            sub: "bob", iat: IssuedAtClaim(value: Date(timeIntervalSince1970: now - 5)),
            exp: ExpirationClaim(value: Date(timeIntervalSince1970: now + 600)), admin: true)
        let token = try await collection.sign(payload)
        let identity = try #require(try verifier().verify(token, now: now).identity)
        #expect(identity.uid == "bob")
        #expect(identity.claims["admin"] == .bool(true))
        #expect(identity.expiresAt == now + 600)
    }

    @Test("one verifier answers many concurrent callers consistently")
    func concurrentVerification() async throws {
        let verifier = try verifier()
        let signers = try await Signers.make()
        let good = try mint(aliceClaims, signer: signers.es256)
        let bad = try mint(aliceClaims, signer: signers.otherES256)
        let results = await withTaskGroup(of: (Bool, Bool).self) { group in
            for _ in 0..<64 {
                group.addTask { (verifier.verify(good, now: now).identity != nil, verifier.verify(bad, now: now).isInvalid) }
            }
            return await group.reduce(into: [(Bool, Bool)]()) { $0.append($1) }
        }
        #expect(results.count == 64)
        #expect(results.allSatisfy { $0.0 && $0.1 })
    }

    /// `TokenVerifier.init` blocks its caller while jwt-kit's actor hands out signers; this checks that the work runs
    /// off the cooperative pool. Without the task-executor preference this test hangs (measured), so a regression
    /// shows as a hang, not a failure.
    @Test("building verifiers from more concurrent tasks than the cooperative pool has threads does not deadlock",
        .timeLimit(.minutes(1)))
    func concurrentConstruction() async throws {
        let configuration = AuthConfiguration(hs256Secret: testSecret)
        let built = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<16 {
                group.addTask { (try? TokenVerifier(configuration: configuration))?.loadedKeys.count ?? 0 }
            }
            return await group.reduce(0, +)
        }
        #expect(built == 16)
    }
}
