import Auth
import Gateway
import HTTPServer
import Logging
import Transport

/// A real Canopy — the gateway behind the HTTP server, data in memory — on an ephemeral loopback port, started in
/// the test process and shut down by ``stop()``.
final class CanopyUnderTest: @unchecked Sendable {  // immutable after init; the server and gateway are thread-safe
    let server: HTTPServer
    let gateway: Gateway
    let port: UInt16

    init() throws {
        var logger = Logger(label: "load-tester-test")
        logger.logLevel = .critical
        let verifier = try TokenVerifier(configuration: AuthConfiguration(listensOnLoopbackOnly: true))
        var gatewayConfiguration = GatewayConfiguration()
        gatewayConfiguration.namespaceAllowList = NamespaceAllowList(["*"])
        gateway = Gateway(configuration: gatewayConfiguration, tokenVerifier: verifier, logger: logger)
        try gateway.openDefaultNamespace()
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 2
        configuration.echoPath = "/echo"
        configuration.broadcastPath = "/broadcast"
        server = HTTPServer(configuration: configuration, router: gateway, logger: logger)
        gateway.reportTransportMetrics(of: server)
        port = try server.start()[0].port
    }

    /// `ws://127.0.0.1:PORT` plus `path`.
    func url(_ path: String = "") -> String {
        "ws://127.0.0.1:\(port)\(path)"
    }

    func stop() {
        server.shutdown()
        gateway.close()
    }
}
