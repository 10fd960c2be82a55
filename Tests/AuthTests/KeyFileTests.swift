import Auth
import Foundation
import JWTKit
import Testing

@Suite("Key files and configuration errors")
struct KeyFileTests {
    let keys: KeyFixtures

    init() throws {
        keys = try KeyFixtures.get()
    }

    /// Whether `verifier` accepts a token signed by `signer` with `kid`.
    private func accepts(_ verifier: TokenVerifier, _ signer: any JWTAlgorithm, kid: String? = nil) throws -> Bool {
        verifier.verify(try mint(aliceClaims, signer: signer, kid: kid), now: now).identity != nil
    }

    /// A JWKS entry for an RSA key.
    private func rsaJWK(_ key: KeyFixtures.RSA, kid: String, extra: String = "") -> String {
        #"{"kty":"RSA","kid":"\#(kid)","use":"sig","alg":"RS256","n":"\#(key.modulus)","e":"\#(key.exponent)"\#(extra)}"#
    }

    /// A JWKS entry for a P-256 key.
    private func ecJWK(_ key: KeyFixtures.EC, kid: String) -> String {
        #"{"kty":"EC","kid":"\#(kid)","crv":"P-256","x":"\#(key.x)","y":"\#(key.y)"}"#
    }

    // MARK: - Formats

    @Test("a PEM file with several public keys, and text around them, loads every key")
    func pemPublicKeys() async throws {
        let file = "RSA key for tokens\n" + keys.rsa.publicKeyPEM + "\nsome comment\n" + keys.ec.publicKeyPEM
        let verifier = try makeVerifier(keyFile: file)
        #expect(verifier.loadedKeys.map(\.description) == [
            "RS256 key from PEM block 1 (PUBLIC KEY)", "ES256 key from PEM block 2 (PUBLIC KEY)",
        ])
        let signers = try await Signers.make()
        #expect(try accepts(verifier, signers.rs256))
        #expect(try accepts(verifier, signers.es256))
        #expect(try accepts(verifier, signers.es256, kid: "any-kid"), "PEM keys have no kid, so a token's kid is not binding")
        #expect(try !accepts(verifier, signers.hs256))
    }

    @Test("certificates in PEM, and PKCS #1 RSA public keys, load")
    func pemCertificates() async throws {
        let pkcs1 = try OpenSSL.run(["rsa", "-pubin", "-RSAPublicKey_out"], input: keys.otherRSA.publicKeyPEM)
        #expect(pkcs1.hasPrefix("-----BEGIN RSA PUBLIC KEY-----"))
        let verifier = try makeVerifier(keyFile: keys.rsa.certificatePEM + keys.ec.certificatePEM + pkcs1)
        #expect(verifier.loadedKeys.map(\.algorithm) == ["RS256", "ES256", "RS256"])
        let signers = try await Signers.make()
        #expect(try accepts(verifier, signers.rs256))
        #expect(try accepts(verifier, signers.es256))
        #expect(try accepts(verifier, signers.otherRS256))
        #expect(try !accepts(verifier, signers.otherES256))
    }

    @Test("a JWKS loads its RS256 and ES256 keys, and a token's kid selects among them")
    func jwks() async throws {
        let file = #"{"keys":[\#(rsaJWK(keys.rsa, kid: "r1")),\#(rsaJWK(keys.otherRSA, kid: "r2")),\#(ecJWK(keys.ec, kid: "e1"))]}"#
        let verifier = try makeVerifier(keyFile: file)
        #expect(verifier.loadedKeys.map(\.description) == [
            #"RS256 key "r1" from JWKS key 0 (kid "r1")"#, #"RS256 key "r2" from JWKS key 1 (kid "r2")"#,
            #"ES256 key "e1" from JWKS key 2 (kid "e1")"#,
        ])
        #expect(verifier.ignoredKeys.isEmpty)
        let signers = try await Signers.make()
        #expect(try accepts(verifier, signers.rs256, kid: "r1"))
        #expect(try accepts(verifier, signers.otherRS256, kid: "r2"))
        #expect(try accepts(verifier, signers.rs256), "without a kid every RS256 key is tried")
        #expect(try accepts(verifier, signers.es256, kid: "e1"))
        #expect(try !accepts(verifier, signers.rs256, kid: "r2"), "the kid names the other key")
        let wrongKid = verifier.verify(try mint(aliceClaims, signer: signers.rs256, kid: "r3"), now: now)
        #expect(wrongKid == .invalid(reason: "no configured RS256 key has the token's kid"))
        let kidOfOtherType = verifier.verify(try mint(aliceClaims, signer: signers.rs256, kid: "e1"), now: now)
        #expect(kidOfOtherType == .invalid(reason: "no configured RS256 key has the token's kid"))
    }

    @Test("JWKS entries this server cannot use are skipped with a note")
    func jwksSkippedEntries() throws {
        let file = #"""
            {"keys":[
              {"kty":"oct","kid":"h","k":"c2VjcmV0"},
              {"kty":"RSA","kid":"enc","use":"enc","n":"\#(keys.rsa.modulus)","e":"\#(keys.rsa.exponent)"},
              {"kty":"RSA","kid":"r512","alg":"RS512","n":"\#(keys.rsa.modulus)","e":"\#(keys.rsa.exponent)"},
              {"kty":"EC","kid":"p384","crv":"P-384","x":"AA","y":"AA"},
              {"kty":"OKP","crv":"Ed25519","x":"AA"},
              \#(rsaJWK(keys.rsa, kid: "ok"))
            ]}
            """#
        let verifier = try makeVerifier(keyFile: file)
        #expect(verifier.loadedKeys.map(\.keyID) == ["ok"])
        #expect(verifier.ignoredKeys == [
            #"JWKS key 0 (kid "h") skipped: key type "oct" is not supported (RSA and EC are)"#,
            #"JWKS key 1 (kid "enc") skipped: "use" is "enc", not "sig""#,
            #"JWKS key 2 (kid "r512") skipped: algorithm RS512 is not supported (RS256 and ES256 are)"#,
            #"JWKS key 3 (kid "p384") skipped: curve "P-384" is not supported (P-256 is)"#,
            #"JWKS key 4 skipped: key type "OKP" is not supported (RSA and EC are)"#,
        ])
    }

    @Test("Google's certificate map loads each certificate under its key id")
    func certificateMap() async throws {
        let json = try JSONSerialization.data(
            withJSONObject: ["k1": keys.rsa.certificatePEM, "k2": keys.otherRSA.certificatePEM])
        let verifier = try makeVerifier(keyFile: String(decoding: json, as: UTF8.self))
        #expect(Set(verifier.loadedKeys.compactMap(\.keyID)) == ["k1", "k2"])
        let signers = try await Signers.make()
        #expect(try accepts(verifier, signers.rs256, kid: "k1"))
        #expect(try accepts(verifier, signers.otherRS256, kid: "k2"))
        #expect(try !accepts(verifier, signers.rs256, kid: "k2"))
    }

    @Test("a byte-order mark before the content is tolerated")
    func byteOrderMark() throws {
        #expect(try makeVerifier(keyFile: "\u{FEFF}" + keys.ec.publicKeyPEM).loadedKeys.count == 1)
    }

    @Test("the secret and the key file work side by side")
    func secretAndFile() async throws {
        let verifier = try makeVerifier(AuthConfiguration(hs256Secret: testSecret), keyFile: keys.ec.publicKeyPEM)
        #expect(verifier.loadedKeys.map(\.description) == ["HS256 key from HS256 secret", "ES256 key from PEM block 1 (PUBLIC KEY)"])
        let signers = try await Signers.make()
        #expect(try accepts(verifier, signers.hs256))
        #expect(try accepts(verifier, signers.es256))
    }

    // MARK: - Errors

    @Test("a missing file is named in the error")
    func missingFile() {
        let path = "/nonexistent/canopy/keys.pem"
        let error = configurationError(AuthConfiguration(publicKeysPath: path))
        guard case .unreadableKeyFile(let reported, _)? = error else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(reported == path)
        #expect(error.map { String(describing: $0) }?.contains(path) == true)
    }

    @Test("files that are neither PEM nor a known JSON shape are refused with the reason", arguments: [
        ("", "the file is empty"), (" \n\t", "the file is empty"),
        ("hello", "neither JSON (a JWKS or a certificate map) nor PEM: no -----BEGIN line found"),
        ("[1,2]", "neither JSON (a JWKS or a certificate map) nor PEM: no -----BEGIN line found"),
        ("{", "invalid JSON: Invalid JSON at byte 1: unexpectedEnd"),
        (#"{"keys":{}}"#, "\"keys\" is not an array (RFC 7517 §5.1)"),
        (#"{"k1":7}"#, "a JSON key file must be a JWKS ({\"keys\":[…]}) or map key ids to PEM certificates"),
        ("-----BEGIN PUBLIC KEY-----\nAAAA\n", "PEM block 1 (PUBLIC KEY) has no END line"),
        ("-----BEGIN PUBLIC KEY\nAAAA\n-----END PUBLIC KEY-----", "a PEM BEGIN line is not closed by five dashes"),
        ("--- not pem ---", "neither JSON (a JWKS or a certificate map) nor PEM: no -----BEGIN line found"),
    ])
    func unrecognized(file: String, reason: String) throws {
        let (error, path) = try keyFileError(file)
        #expect(error == .unrecognizedKeyFile(path: path, reason: reason))
    }

    @Test("an empty key set or a JWKS of only unusable entries is refused", arguments: [
        #"{"keys":[]}"#, "{}", #"{"keys":[{"kty":"oct","k":"AA"}]}"#,
    ])
    func noUsableKeys(file: String) throws {
        let (error, path) = try keyFileError(file)
        #expect(error == .noUsableKeys(path: path))
        #expect(error.map { String(describing: $0) } == "The key file \(path) holds no RS256 or ES256 verification key.")
    }

    @Test("private keys are refused, in PEM and in a JWKS")
    func privateKeys() throws {
        let pem = try keyFileError(keys.ec.privateKey.pemRepresentation)
        #expect(pem.error == .invalidKey(path: pem.path, key: "PEM block 1 (PRIVATE KEY)",
            reason: "it is a private key; the key file must hold public keys or certificates only"))
        let jwks = try keyFileError(#"{"keys":[\#(rsaJWK(keys.rsa, kid: "r", extra: #","d":"AAAA""#))]}"#)
        #expect(jwks.error == .invalidKey(path: jwks.path, key: #"JWKS key 0 (kid "r")"#,
            reason: #"it holds a private key ("d"); the key file must hold public keys only"#))
    }

    @Test("keys jwt-kit cannot use are refused with the block or entry named", arguments: [0, 1, 2, 3, 4, 5])
    func unusableKeys(variant: Int) throws {
        let (file, key, reasonPrefix): (String, String, String) =
            switch variant {
            case 0: (keys.smallRSAPublicKeyPEM, "PEM block 1 (PUBLIC KEY)", "neither an RSA key of at least 2048 bits")
            case 1: (keys.p384PublicKeyPEM, "PEM block 1 (PUBLIC KEY)", "neither an RSA key of at least 2048 bits")
            case 2: ("-----BEGIN PUBLIC KEY-----\nnot base64\n-----END PUBLIC KEY-----\n", "PEM block 1 (PUBLIC KEY)", "neither")
            case 3: ("-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n", "PEM block 1 (EC PARAMETERS)",
                     "unsupported PEM block type")
            case 4: (#"{"keys":[{"kty":"RSA","kid":"r","n":"AQAB","e":"AQAB"}]}"#, #"JWKS key 0 (kid "r")"#, "not an RSA key of at least 2048 bits")
            default: (#"{"keys":[{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}]}"#, "JWKS key 0", "not a P-256 public key")
            }
        let (error, path) = try keyFileError(file)
        guard case .invalidKey(let reportedPath, let reportedKey, let reason)? = error else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(reportedPath == path)
        #expect(reportedKey == key)
        #expect(reason.hasPrefix(reasonPrefix), "\(reason)")
    }

    @Test("JWKS entries with missing or mistyped members are refused", arguments: [
        (#"{"keys":[7]}"#, "JWKS key 0", "not a JSON object"),
        (#"{"keys":[{"kty":"RSA","kid":5,"n":"AA","e":"AQAB"}]}"#, "JWKS key 0", "\"kid\" is 5, not a string"),
        (#"{"keys":[{"kty":"RSA","e":"AQAB"}]}"#, "JWKS key 0", "\"n\" is missing or not a non-empty string"),
        (#"{"keys":[{"kty":"EC","crv":"P-256","x":"AA","y":1}]}"#, "JWKS key 0", "\"y\" is missing or not a non-empty string"),
    ])
    func malformedJWKS(file: String, key: String, reason: String) throws {
        let (error, path) = try keyFileError(file)
        #expect(error == .invalidKey(path: path, key: key, reason: reason))
    }

    @Test("a key file over 1 MiB is refused")
    func oversizedFile() throws {
        let (error, path) = try keyFileError(keys.ec.publicKeyPEM + String(repeating: " ", count: 1024 * 1024))
        #expect(error == .keyFileTooLarge(path: path, limit: 1024 * 1024))
    }

    @Test("a short HS256 secret is refused (RFC 7518 §3.2)")
    func shortSecret() {
        #expect(configurationError(AuthConfiguration(hs256Secret: String(testSecret.dropLast()))) == .secretTooShort(byteCount: 31, minimum: 32))
    }

    @Test("the clock skew must be a finite, non-negative number of seconds", arguments: [-1, Double.nan, Double.infinity])
    func badSkew(skew: Double) {
        guard case .invalidClockSkew? = configurationError(AuthConfiguration(clockSkewSeconds: skew)) else {
            Issue.record("skew \(skew) was accepted")
            return
        }
    }
}
