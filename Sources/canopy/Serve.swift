import ArgumentParser
import ControlPlane
import Dispatch
import Embedded
import Foundation
import Gateway
import HTTPServer
import Logging
import Settings
import Transport

/// `canopy serve`: runs the server until SIGTERM or SIGINT.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Start the server.")

    @Option(help: "Configuration file (JSON). Default: Config/canopy.json when it exists.")
    var config: String?
    @Option(help: "Write the bound port to this file once listening.")
    var portFile: String?
    @Option(help: "Write the bound TLS port to this file once listening.")
    var tlsPortFile: String?

    // The flags of settings: their docs are the settings table's, and SettingsTests check their names against it.
    @Option(help: help(Server.host)) var host: String?
    @Option(help: help(Server.port)) var port: Int?
    @Option(help: help(Server.maxConnections)) var maxConnections: Int?
    @Option(help: help(Server.maxBodyBytes)) var maxBodyBytes: Int?
    @Option(help: help(Server.echoPath)) var echoPath: String?
    @Option(help: help(Server.broadcastPath)) var broadcastPath: String?
    @Option(help: help(SettingsTable.TLS.certificate)) var tlsCert: String?
    @Option(help: help(SettingsTable.TLS.privateKey)) var tlsKey: String?
    @Option(help: help(SettingsTable.TLS.port)) var tlsPort: Int?
    @Option(help: help(Data.directory)) var dataDir: String?
    @Option(help: help(Data.namespaces)) var namespaces: String?
    @Option(help: help(Rules.path)) var rules: String?
    @Option(name: .customLong("rules-dir"), help: help(Rules.directory)) var rulesDirectory: String?
    @Flag(help: help(Rules.allowOpen)) var allowOpen = false
    @Flag(help: help(Rules.explainDenials)) var explainDenials = false
    @Option(help: help(Auth.secret)) var authSecret: String?
    @Option(help: help(Auth.publicKeys)) var authPublicKeys: String?
    @Option(help: help(Auth.audience)) var authAudience: String?
    @Option(help: help(Auth.issuer)) var authIssuer: String?
    @Option(help: help(Auth.clockSkewSeconds)) var authClockSkew: Double?
    @Option(help: help(Auth.firebaseProjectId)) var authFirebaseProject: String?
    @Option(name: .customLong("auth-jwks-url"), help: help(Auth.jwksURL)) var authJWKSURL: String?
    @Option(help: help(Auth.keysCAFile)) var authKeysCaFile: String?
    @Option(help: help(Auth.adminToken)) var adminToken: String?
    @Flag(help: help(Auth.allowUnsignedTokens)) var allowUnsignedTokens = false
    @Option(help: help(AppCheck.projectNumber)) var appCheckProject: String?
    @Option(help: help(AppCheck.mode)) var appCheckMode: String?
    @Option(name: .customLong("app-check-jwks-url"), help: help(AppCheck.jwksURL)) var appCheckJWKSURL: String?
    @Option(name: .customLong("cors-origin"), help: help(SettingsTable.REST.corsOrigins)) var corsOrigins: [String] = []
    @Option(help: help(Log.format)) var logFormat: String?
    @Option(help: help(Log.level)) var logLevel: String?
    @Option(help: help(Cluster.nats)) var cluster: String?
    @Option(help: help(Cluster.snapshotEvery)) var clusterSnapshotEvery: Int?
    @Option(help: help(SettingsTable.Console.directory)) var consoleDir: String?

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        let configPath = config ?? (FileManager.default.fileExists(atPath: "Config/canopy.json") ? "Config/canopy.json" : nil)
        var settings: SettingValues
        do {
            settings = try ConfigurationLoader.load(path: configPath, environment: environment)
        } catch {
            throw ValidationError("\(error)")
        }
        apply(to: &settings)
        let problems = settings.problems
        guard problems.isEmpty else {
            let source = configPath.map { "\($0) (with the environment and flags)" } ?? "the configuration"
            throw ValidationError("\(source): " + problems.joined(separator: "; "))
        }
        let logger = LoggingSetup.bootstrap(format: settings[Log.format], level: settings[Log.level])
        logger.info("canopy \(CanopyVersion.description)")
        let openFiles = ResourceLimits.raiseOpenFileLimit()
        logger.info("process.open_file_limit", metadata: ["limit": "\(openFiles)"])

        let rules = try AccessPolicy.check(settings, logger: logger)
        let consoleAssets = try ConsoleSettings.assets(from: settings, logger: logger)
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
        let allocatorTrim = AllocatorTrim()
        let addresses = try server.start()
        for (index, address) in addresses.enumerated() {
            let scheme = index == 0 ? "http" : "https"
            logger.info("listening on \(address.host):\(address.port)", metadata: ["scheme": "\(scheme)"])
        }
        if consoleAssets != nil {
            let host = addresses[0].host == "0.0.0.0" || addresses[0].host == "::" ? "127.0.0.1" : addresses[0].host
            logger.notice("console: http://\(host):\(addresses[0].port)/.console/#token=\(consoleCredential)")
        }
        // The TLS port's file first: whoever waits for the port file (scripts, test harnesses) then finds both.
        if let tlsPortFile, addresses.count > 1 {
            try "\(addresses[1].port)\n".write(toFile: tlsPortFile, atomically: true, encoding: .utf8)
        }
        if let portFile { try "\(addresses[0].port)\n".write(toFile: portFile, atomically: true, encoding: .utf8) }
        SignalHandling.waitForTermination(logger: logger)
        logger.info("server.shutting_down")
        gateway.configuration.rules.stop()
        allocatorTrim.stop()
        server.shutdown()
        controlPlane.stop()
        gateway.close()
    }

    /// Applies the flags given, over the file and the environment.
    private func apply(to settings: inout SettingValues) {
        func override<Value>(_ setting: Setting<Value>, _ value: Value?) {
            if let value { settings[setting] = value }
        }
        // Not the generic one, which would take an absent flag as `.some(nil)` and clear the setting.
        func override(_ setting: Setting<String?>, _ value: String?) {
            if let value { settings[setting] = value }
        }
        func override(_ setting: Setting<[String]>, commaSeparated text: String?) {
            if let text { settings[setting] = [String](text: text) ?? [] }
        }
        override(Server.host, host)
        override(Server.port, port)
        override(Server.maxConnections, maxConnections)
        override(Server.maxBodyBytes, maxBodyBytes)
        override(Server.echoPath, echoPath)
        override(Server.broadcastPath, broadcastPath)
        if let tlsCert {
            settings[SettingsTable.TLS.certificate] = tlsCert
            settings[SettingsTable.TLS.enabled] = true
        }
        override(SettingsTable.TLS.privateKey, tlsKey)
        override(SettingsTable.TLS.port, tlsPort)
        override(Data.directory, dataDir)
        override(Data.namespaces, commaSeparated: namespaces)
        override(Rules.path, rules)
        override(Rules.directory, rulesDirectory)
        if allowOpen { settings[Rules.allowOpen] = true }
        if explainDenials { settings[Rules.explainDenials] = true }
        override(Auth.secret, authSecret)
        override(Auth.publicKeys, authPublicKeys)
        override(Auth.audience, authAudience)
        override(Auth.issuer, authIssuer)
        override(Auth.clockSkewSeconds, authClockSkew)
        override(Auth.firebaseProjectId, authFirebaseProject)
        override(Auth.jwksURL, authJWKSURL)
        override(Auth.keysCAFile, authKeysCaFile)
        override(Auth.adminToken, adminToken)
        if allowUnsignedTokens { settings[Auth.allowUnsignedTokens] = true }
        override(AppCheck.projectNumber, appCheckProject)
        override(AppCheck.mode, appCheckMode)
        override(AppCheck.jwksURL, appCheckJWKSURL)
        if !corsOrigins.isEmpty { settings[SettingsTable.REST.corsOrigins] = corsOrigins }
        override(Log.format, logFormat)
        override(Log.level, logLevel)
        override(Cluster.nats, commaSeparated: cluster)
        override(Cluster.snapshotEvery, clusterSnapshotEvery)
        override(SettingsTable.Console.directory, consoleDir)
    }

    /// A setting's flag help: its doc and default, from the settings table.
    private static func help(_ setting: any AnySetting) -> ArgumentHelp {
        ArgumentHelp(setting.help)
    }

    private typealias Server = SettingsTable.Server
    private typealias Data = SettingsTable.Data
    private typealias Rules = SettingsTable.Rules
    private typealias Auth = SettingsTable.Auth
    private typealias AppCheck = SettingsTable.AppCheck
    private typealias Log = SettingsTable.Log
    private typealias Cluster = SettingsTable.Cluster
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
