import Foundation
import JWTKit
import Testing

/// Throw-away keys for the tests, made once per test process.
///
/// P-256 keys come from jwt-kit; RSA keys and all certificates from the `openssl` command (jwt-kit cannot generate
/// RSA keys or certificates), as `scripts/gen-test-certs` does for the TLS tests. Nothing is committed.
struct KeyFixtures: Sendable {
    /// An RSA key pair and its public forms.
    struct RSA: Sendable {
        var privateKey: Insecure.RSA.PrivateKey
        var publicKeyPEM: String
        var certificatePEM: String
        /// JWK `n`, base64url.
        var modulus: String
        /// JWK `e`, base64url.
        var exponent: String
    }

    /// A P-256 key pair and its public forms.
    struct EC: Sendable {
        var privateKey: ES256PrivateKey
        var publicKeyPEM: String
        var certificatePEM: String
        /// JWK `x`, base64url.
        var x: String
        /// JWK `y`, base64url.
        var y: String
    }

    /// The configured RSA key.
    var rsa: RSA
    /// An RSA key the server does not know.
    var otherRSA: RSA
    /// The configured P-256 key.
    var ec: EC
    /// A P-256 key the server does not know.
    var otherEC: EC
    /// A 1024-bit RSA public key, which jwt-kit refuses.
    var smallRSAPublicKeyPEM: String
    /// A P-384 public key (unsupported curve).
    var p384PublicKeyPEM: String

    /// The fixtures, or the error that prevented making them.
    static let shared: Result<KeyFixtures, any Error> = Result { try KeyFixtures() }

    /// The shared fixtures (throws if they could not be made).
    static func get() throws -> KeyFixtures {
        try shared.get()
    }

    private init() throws {
        rsa = try Self.makeRSA()
        otherRSA = try Self.makeRSA()
        ec = try Self.makeEC()
        otherEC = try Self.makeEC()
        let small = try OpenSSL.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"])
        smallRSAPublicKeyPEM = try OpenSSL.run(["pkey", "-pubout"], input: small)
        let p384 = try OpenSSL.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"])
        p384PublicKeyPEM = try OpenSSL.run(["pkey", "-pubout"], input: p384)
    }

    private static func makeRSA() throws -> RSA {
        let privatePEM = try OpenSSL.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"])
        let privateKey = try Insecure.RSA.PrivateKey(pem: privatePEM)
        let primitives = try privateKey.publicKey.getKeyPrimitives()
        return RSA(
            privateKey: privateKey,
            publicKeyPEM: privateKey.publicKey.pemRepresentation,
            certificatePEM: try OpenSSL.certificate(privateKeyPEM: privatePEM),
            modulus: base64URL(primitives.modulus),
            exponent: base64URL(primitives.publicExponent))
    }

    private static func makeEC() throws -> EC {
        let privateKey = ES256PrivateKey()
        let parameters = try #require(privateKey.parameters)
        return EC(
            privateKey: privateKey,
            publicKeyPEM: privateKey.publicKey.pemRepresentation,
            certificatePEM: try OpenSSL.certificate(privateKeyPEM: privateKey.pemRepresentation),
            x: parameters.x,
            y: parameters.y)
    }
}

/// Base64url without padding (RFC 7515 §2).
func base64URL(_ bytes: some DataProtocol) -> String {
    Data(bytes).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

/// Runs the `openssl` command.
enum OpenSSL {
    /// Raised when `openssl` fails.
    struct Failed: Error, CustomStringConvertible {
        var arguments: [String]
        var status: Int32
        var description: String { "openssl \(arguments.joined(separator: " ")) exited with status \(status)" }
    }

    /// Runs `openssl arguments…` with `input` on stdin and returns its stdout.
    static func run(_ arguments: [String], input: String = "") throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failed(arguments: arguments, status: process.terminationStatus) }
        return String(decoding: output, as: UTF8.self)
    }

    /// A self-signed certificate for the private key in `privateKeyPEM`.
    static func certificate(privateKeyPEM: String) throws -> String {
        try run(["req", "-x509", "-new", "-batch", "-key", "/dev/stdin", "-subj", "/CN=canopy-auth-test", "-days", "2"],
            input: privateKeyPEM)
    }
}
