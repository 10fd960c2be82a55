import Auth
import Foundation
import JWTKit
import TestSupport

/// The instant the tests call "now", in seconds since the epoch.
let now: Double = 1_750_000_000

/// The HS256 secret the tests configure (32 bytes, the minimum).
let testSecret = "0123456789abcdef0123456789abcdef"

/// Claims of a fresh token for `alice`, issued a minute ago and valid for an hour.
let aliceClaims = #"{"sub":"alice","iat":1749999940,"exp":1750003600}"#

/// jwt-kit signers for the fixture keys, used to mint test tokens.
struct Signers {
    var hs256: any JWTAlgorithm
    var otherHS256: any JWTAlgorithm
    var rs256: any JWTAlgorithm
    var otherRS256: any JWTAlgorithm
    var es256: any JWTAlgorithm
    var otherES256: any JWTAlgorithm

    /// Signers for every fixture key (the "other" ones are unknown to the server).
    static func make() async throws -> Signers {
        let keys = try KeyFixtures.get()
        let collection = JWTKeyCollection()
        await collection.add(hmac: HMACKey(from: testSecret), digestAlgorithm: .sha256, kid: "hs")
        await collection.add(hmac: HMACKey(from: testSecret + "-other"), digestAlgorithm: .sha256, kid: "hs-other")
        await collection.add(rsa: keys.rsa.privateKey, digestAlgorithm: .sha256, kid: "rs")
        await collection.add(rsa: keys.otherRSA.privateKey, digestAlgorithm: .sha256, kid: "rs-other")
        await collection.add(ecdsa: keys.ec.privateKey, kid: "es")
        await collection.add(ecdsa: keys.otherEC.privateKey, kid: "es-other")
        return Signers(
            hs256: try await collection.getKey(for: "hs"),
            otherHS256: try await collection.getKey(for: "hs-other"),
            rs256: try await collection.getKey(for: "rs"),
            otherRS256: try await collection.getKey(for: "rs-other"),
            es256: try await collection.getKey(for: "es"),
            otherES256: try await collection.getKey(for: "es-other"))
    }
}

/// Builds a compact JWS from header and claims JSON text, signed by `signer` (unsigned when `nil`).
func mint(header: String, claims: String, signer: (any JWTAlgorithm)?) throws -> String {
    let signingInput = base64URL(Array(header.utf8)) + "." + base64URL(Array(claims.utf8))
    let signature = try signer.map { try $0.sign(Array(signingInput.utf8)) } ?? []
    return signingInput + "." + base64URL(signature)
}

/// Builds a token with a standard header naming `signer`'s algorithm (and `kid` when given).
func mint(_ claims: String, signer: any JWTAlgorithm, kid: String? = nil) throws -> String {
    let kidMember = kid.map { #","kid":"\#($0)""# } ?? ""
    return try mint(header: #"{"alg":"\#(signer.name)","typ":"JWT"\#(kidMember)}"#, claims: claims, signer: signer)
}

/// Runs `body` with the path of a temporary file holding `text`, removed afterwards.
func withKeyFile<Result>(_ text: String, _ body: (String) throws -> Result) throws -> Result {
    let directory = TemporaryDirectory(prefix: "canopy-auth-test")
    defer { directory.remove() }
    let path = directory.path + "/keys"
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    return try body(path)
}

/// A verifier built from `configuration`, with `keyFile` (if given) written to a temporary file first.
func makeVerifier(_ configuration: AuthConfiguration = AuthConfiguration(), keyFile: String? = nil) throws
    -> TokenVerifier
{
    guard let keyFile else { return try TokenVerifier(configuration: configuration) }
    return try withKeyFile(keyFile) { path in
        var configuration = configuration
        configuration.publicKeysPath = path
        return try TokenVerifier(configuration: configuration)
    }
}

/// The error `TokenVerifier.init` throws for `configuration`, or `nil` if it succeeds.
func configurationError(_ configuration: AuthConfiguration) -> AuthConfigurationError? {
    do throws(AuthConfigurationError) {
        _ = try TokenVerifier(configuration: configuration)
        return nil
    } catch {
        return error
    }
}

/// The error `TokenVerifier.init` throws for a key file holding `keyFile`, with the file's path.
func keyFileError(_ keyFile: String) throws -> (error: AuthConfigurationError?, path: String) {
    try withKeyFile(keyFile) { path in
        (configurationError(AuthConfiguration(publicKeysPath: path)), path)
    }
}

extension AuthOutcome {
    /// The identity of a `.user` outcome.
    var identity: AuthIdentity? {
        if case .user(let identity) = self { return identity }
        return nil
    }

    /// Whether this is `.invalid`.
    var isInvalid: Bool {
        if case .invalid = self { return true }
        return false
    }

    /// The reason of an `.invalid` outcome.
    var reason: String? {
        if case .invalid(let reason) = self { return reason }
        return nil
    }
}
