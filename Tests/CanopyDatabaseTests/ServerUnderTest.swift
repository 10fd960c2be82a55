import Auth
import Foundation
import Gateway
import HTTPServer
import Logging
import TestSupport
import Transport

/// A real Canopy (the gateway behind the HTTP server) on a loopback port, persisting in a temporary directory, that
/// can be stopped and started again on the same port with the same data.
final class ServerUnderTest: @unchecked Sendable {  // used from one test task at a time
    private(set) var port: UInt16 = 0
    /// The HTTPS/WSS port, when the server serves TLS.
    private(set) var tlsPort: UInt16 = 0
    /// The self-signed certificate the TLS listener presents (and clients trust).
    var certificatePath: String { directory.path + "/cert.pem" }
    private let tls: Bool
    private var server: HTTPServer?
    private var gateway: Gateway?
    let directory = TemporaryDirectory(prefix: "canopy-client-test")
    private let rules: String?

    /// A server enforcing `rules` (a rules file's text), or serving open data without; with `tls`, also an
    /// HTTPS/WSS listener with a fresh self-signed certificate (`scripts/gen-test-certs`).
    init(rules: String? = nil, tls: Bool = false) throws {
        self.rules = rules
        self.tls = tls
        if tls {
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("scripts/gen-test-certs")
            let process = try Process.run(script, arguments: [directory.path])
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
        }
        try start()
    }

    /// Starts (again): on the port it had before, if any.
    func start() throws {
        var logger = Logger(label: "canopy-client-test")
        logger.logLevel = .critical
        let verifier = try TokenVerifier(configuration: AuthConfiguration(listensOnLoopbackOnly: true))
        var gatewayConfiguration = GatewayConfiguration()
        gatewayConfiguration.namespaceAllowList = NamespaceAllowList(["*"])
        gatewayConfiguration.dataDirectory = directory.path
        let holder = RulesHolder(nil)
        if let rules { _ = try holder.replace(with: Array(rules.utf8), fileName: "database.rules.json") }
        gatewayConfiguration.rules = RulesLibrary(defaults: holder)
        let gateway = Gateway(configuration: gatewayConfiguration, tokenVerifier: verifier, logger: logger)
        try gateway.openDefaultNamespace()
        var configuration = ServerConfiguration()
        configuration.port = port
        configuration.eventLoops = 1
        configuration.shutdownDeadlineSeconds = 1
        if tls {
            configuration.tls = TLSListenerConfiguration(
                port: tlsPort, certificatePath: certificatePath, privateKeyPath: directory.path + "/key.pem")
        }
        let server = HTTPServer(configuration: configuration, router: gateway, logger: logger)
        let addresses = try server.start()
        port = addresses[0].port
        if tls { tlsPort = addresses[1].port }
        self.server = server
        self.gateway = gateway
    }

    /// Stops: every connection is closed, the data is kept.
    func stop() {
        server?.shutdown()
        gateway?.close()
        server = nil
        gateway = nil
    }

    deinit {
        stop()
        directory.remove()
    }
}
