import Foundation
import TLS
import TestSupport

/// A throw-away self-signed identity made by `scripts/gen-test-certs` in a fresh temporary directory.
struct CertificateFixture {
    /// Raised when the generator script fails.
    struct GenerationFailed: Error, CustomStringConvertible {
        let status: Int32
        var description: String { "scripts/gen-test-certs exited with status \(status)" }
    }

    /// The directory holding the files; removed by ``remove()``.
    let directory: TemporaryDirectory
    /// The self-signed certificate (SAN localhost, 127.0.0.1, ::1), which is also its own trust anchor.
    var certificatePath: String { directory.path + "/cert.pem" }
    /// The certificate's private key.
    var privateKeyPath: String { directory.path + "/key.pem" }

    /// The generator, found relative to this file so no resource bundle is needed.
    private static let scriptURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/gen-test-certs")

    /// Runs the generator into a new temporary directory.
    init() throws {
        directory = TemporaryDirectory(prefix: "canopy-tls-test")
        let process = Process()
        process.executableURL = Self.scriptURL
        process.arguments = [directory.path]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            directory.remove()
            throw GenerationFailed(status: process.terminationStatus)
        }
    }

    /// A server context presenting this identity.
    func serverContext() throws -> TLSContext {
        try TLSContext.server(certificateChainPath: certificatePath, privateKeyPath: privateKeyPath)
    }

    /// A verifying client context that trusts this identity.
    func clientContext() throws -> TLSContext {
        try TLSContext.client(trustedCAPath: certificatePath)
    }

    /// Deletes the generated files.
    func remove() {
        directory.remove()
    }
}
