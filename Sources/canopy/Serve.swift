import ArgumentParser
import ControlPlane
import Dispatch
import Embedded
import Foundation
import Gateway
import HTTPServer
import Logging
import Transport

/// `canopy serve`: runs the server until SIGTERM or SIGINT.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Start the server.")

    @Option(help: "Configuration file (JSON). Default: Config/canopy.json when it exists.")
    var config: String?
    @Option(help: "Address to listen on (default 127.0.0.1).")
    var host: String?
    @Option(help: "Port to listen on; 0 picks a free port (default 9000).")
    var port: Int?
    @Option(help: "Write the bound port to this file once listening.")
    var portFile: String?
    @Option(help: "Data directory (default: data).")
    var dataDir: String?
    @Option(help: "Security rules file (default: Config/database.rules.json).")
    var rules: String?
    @Option(name: .customLong("rules-dir"), help: "Directory of per-namespace rules files, NAME.rules.json.")
    var rulesDirectory: String?
    @Option(help: "Log format: text or json.")
    var logFormat: String?
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String?
    @Option(help: "Serve a WebSocket echo endpoint at this path (conformance testing only).")
    var echoPath: String?
    @Option(help: "Serve a WebSocket broadcast endpoint at this path (transport benchmarks only).")
    var broadcastPath: String?
    @Option(help: "TLS certificate chain (PEM); enables the HTTPS/WSS listener with --tls-key.")
    var tlsCert: String?
    @Option(help: "TLS private key (PEM).")
    var tlsKey: String?
    @Option(help: "Port of the HTTPS/WSS listener (default 9443; 0 picks a free port).")
    var tlsPort: Int?
    @Option(help: "Write the bound TLS port to this file once listening.")
    var tlsPortFile: String?
    @Option(help: "Maximum live connections; beyond it peers get 503.")
    var maxConnections: Int?
    @Option(help: "HS256 secret for verifying auth tokens (at least 32 bytes).")
    var authSecret: String?
    @Option(help: "RS256/ES256 verification keys: a PEM file or a JWKS file.")
    var authPublicKeys: String?
    @Option(help: "Required `aud` claim of auth tokens.")
    var authAudience: String?
    @Option(help: "Required `iss` claim of auth tokens.")
    var authIssuer: String?
    @Option(help: "Leeway in seconds for token expiry and issue times (default 60).")
    var authClockSkew: Double?
    @Option(help: "Accept Firebase ID tokens of this Firebase project (RS256, Google's published keys, fetched and kept fresh).")
    var authFirebaseProject: String?
    @Option(name: .customLong("auth-jwks-url"), help: "https:// URL of the token signing keys (a JWKS or a Google-style certificate map): an OpenID Connect issuer's (with --auth-issuer and --auth-audience), or instead of Google's with --auth-firebase-project.")
    var authJWKSURL: String?
    @Option(help: "PEM file of CA certificates trusted, besides the system's, when fetching signing keys (ID tokens and App Check).")
    var authKeysCaFile: String?
    @Option(help: "App Check: verify App Check tokens of the Firebase project with this number.")
    var appCheckProject: String?
    @Option(help: "App Check: off, monitor (count and log; the default) or enforce (refuse data access without a valid token).")
    var appCheckMode: String?
    @Option(name: .customLong("app-check-jwks-url"), help: "App Check: https:// URL of the App Check signing keys (default: Firebase's).")
    var appCheckJWKSURL: String?
    @Option(help: "Admin credential (rules bypassed). Without it, a loopback-only server accepts the emulator's `owner`.")
    var adminToken: String?
    @Flag(help: "Emulator test mode: accept unsigned (alg none) tokens. Loopback only.")
    var allowUnsignedTokens = false
    @Flag(help: "Serve open data (no rules enforced) on a non-loopback address.")
    var allowOpen = false
    @Option(help: "Largest request body in bytes; larger ones get 413 (default 16 MiB).")
    var maxBodyBytes: Int?
    @Option(name: .customLong("cors-origin"), help: "Origin allowed to call the REST API from a browser (repeatable; default: any).")
    var corsOrigins: [String] = []
    @Flag(help: "Log each denied operation with every rule tried and its outcome.")
    var explainDenials = false
    @Option(help: "Cluster mode: the NATS JetStream servers holding every namespace's log (nats://HOST:PORT[,…]).")
    var cluster: String?
    @Option(help: "Serve the web console from this folder instead of the files built into the binary (development: edits show on a restart).")
    var consoleDir: String?
    @Option(help: "Namespaces any client may create, comma-separated; `*` matches any run of characters (default: none, only the admin credential creates namespaces).")
    var namespaces: String?
    @Option(help: "Cluster mode: store a namespace's snapshot every this many log positions, and drop older entries (0: never).")
    var clusterSnapshotEvery: Int?

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        let configPath = config ?? (FileManager.default.fileExists(atPath: "Config/canopy.json") ? "Config/canopy.json" : nil)
        var settings: CanopyConfiguration
        do {
            settings = try ConfigurationLoader.load(path: configPath, environment: environment)
        } catch {
            throw ValidationError("\(error)")
        }
        apply(to: &settings)
        let problems = ConfigurationValidation.problems(in: settings)
        guard problems.isEmpty else {
            let source = configPath.map { "\($0) (with the environment and flags)" } ?? "the configuration"
            throw ValidationError("\(source): " + problems.joined(separator: "; "))
        }
        let logger = LoggingSetup.bootstrap(format: settings.log.format, level: settings.log.level)
        logger.info("canopy \(CanopyVersion.description)")
        let openFiles = ResourceLimits.raiseOpenFileLimit()
        logger.info("process.open_file_limit", metadata: ["limit": "\(openFiles)"])

        let rules = try AccessPolicy.check(settings, logger: logger)
        let consoleAssets = try ConsoleSettings.assets(from: settings.console, logger: logger)
        var random = SystemRandomNumberGenerator()
        let consoleCredential = (0..<4).map { _ in String(random.next(), radix: 16) }.joined()
        let gateway = try GatewaySettings.makeGateway(
            from: settings, rules: rules, consoleCredential: consoleAssets == nil ? nil : consoleCredential,
            logger: logger)
        do {
            try gateway.openDefaultNamespace()
        } catch {
            throw ConfigurationError(description: "\(error)")
        }
        // The control plane (admin endpoints, console) answers its paths and hands every other request to the gateway.
        let controlPlane = ControlPlane(gateway: gateway, consoleAssets: consoleAssets, logger: logger)
        let server = HTTPServer(configuration: try ServerSettings.make(from: settings), router: controlPlane,
                                logger: logger)
        gateway.reportTransportMetrics(of: server)
        controlPlane.start()
        gateway.configuration.rules.watch(every: 1, logger: logger) { names in gateway.rulesChanged(in: names) }
        let addresses = try server.start()
        for (index, address) in addresses.enumerated() {
            let scheme = index == 0 ? "http" : "https"
            logger.info("listening on \(address.host):\(address.port)", metadata: ["scheme": "\(scheme)"])
        }
        if consoleAssets != nil {
            let host = addresses[0].host == "0.0.0.0" || addresses[0].host == "::" ? "127.0.0.1" : addresses[0].host
            logger.notice("console: http://\(host):\(addresses[0].port)/.console/#token=\(consoleCredential)")
        }
        if let portFile { try "\(addresses[0].port)\n".write(toFile: portFile, atomically: true, encoding: .utf8) }
        if let tlsPortFile, addresses.count > 1 {
            try "\(addresses[1].port)\n".write(toFile: tlsPortFile, atomically: true, encoding: .utf8)
        }
        SignalHandling.waitForTermination(logger: logger)
        logger.info("server.shutting_down")
        gateway.configuration.rules.stop()
        server.shutdown()
        controlPlane.stop()
        gateway.close()
    }

    private func apply(to settings: inout CanopyConfiguration) {
        if let host { settings.server.host = host }
        if let port { settings.server.port = port }
        if let dataDir { settings.data.directory = dataDir }
        if let namespaces {
            settings.data.namespaces = namespaces.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
        }
        if let authSecret { settings.auth.secret = authSecret }
        if let authPublicKeys { settings.auth.publicKeys = authPublicKeys }
        if let authAudience { settings.auth.audience = authAudience }
        if let authIssuer { settings.auth.issuer = authIssuer }
        if let authClockSkew { settings.auth.clockSkewSeconds = authClockSkew }
        if let authFirebaseProject { settings.auth.firebaseProjectId = authFirebaseProject }
        if let authJWKSURL { settings.auth.jwksURL = authJWKSURL }
        if let authKeysCaFile { settings.auth.keysCAFile = authKeysCaFile }
        if let appCheckProject { settings.appCheck.projectNumber = appCheckProject }
        if let appCheckMode { settings.appCheck.mode = appCheckMode }
        if let appCheckJWKSURL { settings.appCheck.jwksURL = appCheckJWKSURL }
        if let adminToken { settings.auth.adminToken = adminToken }
        if allowUnsignedTokens { settings.auth.allowUnsignedTokens = true }
        if let rules { settings.rules.path = rules }
        if let rulesDirectory { settings.rules.directory = rulesDirectory }
        if allowOpen { settings.rules.allowOpen = true }
        if explainDenials { settings.rules.explainDenials = true }
        if let logFormat { settings.log.format = logFormat }
        if let logLevel { settings.log.level = logLevel }
        if let echoPath { settings.server.echoPath = echoPath }
        if let broadcastPath { settings.server.broadcastPath = broadcastPath }
        if let maxConnections { settings.server.maxConnections = maxConnections }
        if let maxBodyBytes { settings.server.maxBodyBytes = maxBodyBytes }
        if !corsOrigins.isEmpty { settings.rest.corsOrigins = corsOrigins }
        if let tlsCert { settings.tls.certificate = tlsCert; settings.tls.enabled = true }
        if let tlsKey { settings.tls.privateKey = tlsKey }
        if let tlsPort { settings.tls.port = tlsPort }
        if let cluster { settings.cluster.nats = cluster.split(separator: ",").map(String.init) }
        if let clusterSnapshotEvery { settings.cluster.snapshotEvery = clusterSnapshotEvery }
        if let consoleDir { settings.console.directory = consoleDir }
    }
}

/// Blocks until SIGTERM or SIGINT, handled by Dispatch signal sources (after ignoring the default action).
enum SignalHandling {
    static func waitForTermination(logger: Logger) {
        let semaphore = DispatchSemaphore(value: 0)
        var sources: [any DispatchSourceSignal] = []
        for signalNumber in [SIGTERM, SIGINT] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { semaphore.signal() }
            source.resume()
            sources.append(source)
        }
        semaphore.wait()
        withExtendedLifetime(sources) {}
    }
}
