import ArgumentParser
import Auth
import Cluster
import Gateway
import HTTPServer
import Logging
import Rules
import Store

/// Turns the operator's configuration into the gateway and its token verifier, validating them.
enum GatewaySettings {
    /// The gateway; `consoleCredential` signs the web console in (`nil`: the console is not served).
    static func makeGateway(from settings: CanopyConfiguration, rules: RuleSet?, consoleCredential: String?,
                            logger: Logger) throws -> Gateway
    {
        var configuration = GatewayConfiguration()
        configuration.rules = RulesLibrary(defaults: RulesHolder(rules, path: rules == nil ? nil : settings.rules.path),
                                           directory: settings.rules.directory)
        configuration.explainDenials = settings.rules.explainDenials
        configuration.dataDirectory = settings.data.directory
        guard DataDirectory.isValidNamespace(settings.data.defaultNamespace) else {
            throw ValidationError("data.defaultNamespace must be 1-63 of a-z A-Z 0-9 - _")
        }
        configuration.defaultNamespace = settings.data.defaultNamespace
        configuration.maxNamespaces = settings.data.maxNamespaces
        configuration.namespaceAllowList = NamespaceAllowList(settings.data.namespaces)
        configuration.createsNamespacesOnFirstUse = settings.listensOnLoopbackOnly
        guard let fsync = FsyncPolicy(parsing: settings.data.fsync) else {
            throw ValidationError("data.fsync must be always, interval:MILLISECONDS or none")
        }
        configuration.fsyncPolicy = fsync
        configuration.conflationThresholdBytes = settings.gateway.conflationThresholdBytes
        configuration.maxListensPerConnection = settings.gateway.maxListensPerConnection
        configuration.maxOnDisconnectPerConnection = settings.gateway.maxOnDisconnectPerConnection
        configuration.maxAuthAttemptsPerSecond = settings.gateway.maxAuthAttemptsPerSecond
        configuration.maxOutstandingRequestsPerConnection = settings.gateway.maxOutstandingRequestsPerConnection
        configuration.longPoll = LongPollSettings(
            holdSeconds: settings.gateway.longPollHoldSeconds, idleTimeoutSeconds: settings.gateway.longPollIdleTimeoutSeconds,
            outboxLimitBytes: settings.outbound.hardLimitBytes,
            inboundBytesPerSecond: settings.server.maxInboundBytesPerSecond, inboundBurstBytes: settings.server.inboundBurstBytes,
            inboundThrottleSeconds: settings.server.inboundThrottleSeconds)
        configuration.corsOrigins = settings.rest.corsOrigins
        configuration.streamKeepAliveSeconds = settings.rest.keepAliveSeconds
        configuration.restRequiresIndexes = settings.rest.requireIndexes
        configuration.streamCutOffBytes = max(1, settings.outbound.highWaterMarkBytes)
        if !settings.cluster.nats.isEmpty {
            let cluster: NATSCluster
            do {
                cluster = try NATSCluster(urls: settings.cluster.nats, replicas: settings.cluster.replicas,
                                          snapshotInterval: UInt64(settings.cluster.snapshotEvery))
            } catch {
                throw ValidationError("cluster: \(error)")
            }
            logger.info("cluster.connected", metadata: ["nats": "\(settings.cluster.nats.joined(separator: ","))",
                                                        "node": "\(cluster.node)"])
            configuration.replicatedLog = { namespace in cluster.log(for: namespace) }
        }

        let loopbackOnly = settings.listensOnLoopbackOnly
        var auth = AuthConfiguration(
            hs256Secret: settings.auth.secret, publicKeysPath: settings.auth.publicKeys,
            audience: settings.auth.audience, issuer: settings.auth.issuer, adminToken: settings.auth.adminToken,
            listensOnLoopbackOnly: loopbackOnly, allowUnsignedTokens: settings.auth.allowUnsignedTokens,
            clockSkewSeconds: settings.auth.clockSkewSeconds)
        auth.firebaseProjectId = settings.auth.firebaseProjectId
        auth.remoteKeys = try AuthSettings.idTokenKeys(from: settings.auth, logger: logger)
        configuration.appCheck = try AuthSettings.appCheck(from: settings, logger: logger)
        auth.consoleCredential = consoleCredential
        if settings.auth.allowUnsignedTokens {
            guard loopbackOnly else {
                throw ValidationError("--allow-unsigned-tokens is only allowed when listening on loopback")
            }
            logger.warning("""
                TEST MODE: unsigned auth tokens (alg none) are accepted with whatever claims they carry; \
                anyone who can connect can be any user. Never use this outside tests.
                """)
        }
        let verifier: TokenVerifier
        do {
            verifier = try TokenVerifier(configuration: auth)
        } catch {
            throw ValidationError("auth: \(error)")
        }
        AuthSettings.logStart(settings.auth, keys: auth.remoteKeys, logger: logger)
        if loopbackOnly && settings.auth.adminToken == nil {
            logger.info("admin credential: the emulator's `owner` token (loopback only)")
        }
        return Gateway(configuration: configuration, tokenVerifier: verifier, logger: logger)
    }
}
