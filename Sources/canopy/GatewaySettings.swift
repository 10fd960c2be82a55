import ArgumentParser
import Auth
import Cluster
import Gateway
import HTTPServer
import Logging
import Rules
import Settings
import Store

/// Turns the operator's configuration into the gateway and its token verifier, validating them.
enum GatewaySettings {
    /// The gateway; `consoleCredential` signs the web console in (`nil`: the console is not served).
    static func makeGateway(from settings: SettingValues, rules: RuleSet?, consoleCredential: String?,
                            logger: Logger) throws -> Gateway
    {
        var configuration = try gatewayConfiguration(from: settings, rules: rules, logger: logger)
        let loopbackOnly = settings.listensOnLoopbackOnly
        typealias Auth = SettingsTable.Auth
        var auth = AuthConfiguration(
            hs256Secret: settings[Auth.secret], publicKeysPath: settings[Auth.publicKeys],
            audience: settings[Auth.audience], issuer: settings[Auth.issuer], adminToken: settings[Auth.adminToken],
            listensOnLoopbackOnly: loopbackOnly, allowUnsignedTokens: settings[Auth.allowUnsignedTokens],
            clockSkewSeconds: settings[Auth.clockSkewSeconds])
        auth.firebaseProjectId = settings[Auth.firebaseProjectId]
        auth.remoteKeys = try AuthSettings.idTokenKeys(from: settings, logger: logger)
        configuration.appCheck = try AuthSettings.appCheck(from: settings, logger: logger)
        auth.consoleCredential = consoleCredential
        if settings[Auth.allowUnsignedTokens] {
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
        AuthSettings.logStart(settings, keys: auth.remoteKeys, logger: logger)
        if loopbackOnly && settings[Auth.adminToken] == nil {
            logger.info("admin credential: the emulator's `owner` token (loopback only)")
        }
        return Gateway(configuration: configuration, tokenVerifier: verifier, logger: logger)
    }

    /// The gateway's configuration but for tokens and App Check.
    private static func gatewayConfiguration(from settings: SettingValues, rules: RuleSet?, logger: Logger) throws
        -> GatewayConfiguration
    {
        typealias Data = SettingsTable.Data
        typealias Limits = SettingsTable.Gateway
        var configuration = GatewayConfiguration()
        let rulesPath = rules == nil ? nil : settings[SettingsTable.Rules.path]
        configuration.rules = RulesLibrary(defaults: RulesHolder(rules, path: rulesPath),
                                           directory: settings[SettingsTable.Rules.directory])
        configuration.explainDenials = settings[SettingsTable.Rules.explainDenials]
        configuration.dataDirectory = settings[Data.directory]
        guard DataDirectory.isValidNamespace(settings[Data.defaultNamespace]) else {
            throw ValidationError("data.defaultNamespace must be 1-63 of a-z A-Z 0-9 - _")
        }
        configuration.defaultNamespace = settings[Data.defaultNamespace]
        configuration.maxNamespaces = settings[Data.maxNamespaces]
        configuration.namespaceAllowList = NamespaceAllowList(settings[Data.namespaces])
        configuration.createsNamespacesOnFirstUse = settings.listensOnLoopbackOnly
        guard let fsync = FsyncPolicy(parsing: settings[Data.fsync]) else {
            throw ValidationError("data.fsync must be always, interval:MILLISECONDS or none")
        }
        configuration.fsyncPolicy = fsync
        configuration.conflationThresholdBytes = settings[Limits.conflationThresholdBytes]
        configuration.maxListensPerConnection = settings[Limits.maxListensPerConnection]
        configuration.maxOnDisconnectPerConnection = settings[Limits.maxOnDisconnectPerConnection]
        configuration.maxAuthAttemptsPerSecond = settings[Limits.maxAuthAttemptsPerSecond]
        configuration.maxOutstandingRequestsPerConnection = settings[Limits.maxOutstandingRequestsPerConnection]
        configuration.longPoll = LongPollSettings(
            holdSeconds: settings[Limits.longPollHoldSeconds],
            idleTimeoutSeconds: settings[Limits.longPollIdleTimeoutSeconds],
            outboxLimitBytes: settings[SettingsTable.Outbound.hardLimitBytes],
            inboundBytesPerSecond: settings[SettingsTable.Server.maxInboundBytesPerSecond],
            inboundBurstBytes: settings[SettingsTable.Server.inboundBurstBytes],
            inboundThrottleSeconds: settings[SettingsTable.Server.inboundThrottleSeconds])
        configuration.corsOrigins = settings[SettingsTable.REST.corsOrigins]
        configuration.streamKeepAliveSeconds = settings[SettingsTable.REST.keepAliveSeconds]
        configuration.restRequiresIndexes = settings[SettingsTable.REST.requireIndexes]
        configuration.streamCutOffBytes = max(1, settings[SettingsTable.Outbound.highWaterMarkBytes])
        if let cluster = try cluster(from: settings, logger: logger) {
            configuration.replicatedLog = { namespace in cluster.log(for: namespace) }
            let namespaces = ClusterNamespaces(cluster: cluster)
            namespaces.start()
            configuration.existsInCluster = { namespaces.contains($0) }
        }
        return configuration
    }

    /// Cluster mode's connection to NATS, which holds every namespace's log; `nil` without `cluster.nats` (a
    /// single node).
    private static func cluster(from settings: SettingValues, logger: Logger) throws -> NATSCluster? {
        typealias Cluster = SettingsTable.Cluster
        let urls = settings[Cluster.nats]
        guard !urls.isEmpty else { return nil }
        let cluster: NATSCluster
        do {
            cluster = try NATSCluster(urls: urls, replicas: settings[Cluster.replicas],
                                      snapshotInterval: UInt64(settings[Cluster.snapshotEvery]),
                                      report: { log($0, to: logger) })
        } catch {
            throw ValidationError("cluster: \(error)")
        }
        logger.info("cluster.connected", metadata: ["nats": "\(urls.joined(separator: ","))", "node": "\(cluster.node)"])
        return cluster
    }

    /// One line for the operator per event of a namespace's log.
    private static func log(_ event: FollowingEvent, to logger: Logger) {
        switch event {
        case .leaderContradicts(let namespace, let leader, let position, let stepDown):
            logger.warning("""
                cluster.leader_contradicts: the stream leader holds another entry than this replica applied; \
                it was asked to step down
                """, metadata: ["namespace": "\(namespace)", "leader": "\(leader)", "position": "\(position)",
                                "step_down": "\(stepDown)"])
        case .leaderContradictsPeer(let namespace, let leader, let peer, let position, let stepDown):
            logger.warning("""
                cluster.leader_contradicts_peer: the stream leader does not hold the entry another replica, ahead \
                of this one, applied; it was asked to step down
                """, metadata: ["namespace": "\(namespace)", "leader": "\(leader)", "peer": "\(peer)",
                                "position": "\(position)", "step_down": "\(stepDown)"])
        case .sourceDistrusted(let namespace, let leader, let stepDown):
            logger.error("""
                cluster.source_distrusted: the replica rebuilt from the stream leader's copy and was outvoted \
                again; that leader was asked to step down
                """, metadata: ["namespace": "\(namespace)", "leader": "\(leader)", "step_down": "\(stepDown)"])
        case .diverged(let namespace, let position):
            logger.error("cluster.diverged: a second stream leader contradicts this replica's entries",
                         metadata: ["namespace": "\(namespace)", "position": "\(position)"])
        case .stalled(let namespace, let seconds, let delivered, let knownHead, let halted, let attempts):
            logger.warning("cluster.follow_stalled: no entry reached this replica while the log holds more", metadata: [
                "namespace": "\(namespace)", "seconds": "\(seconds)", "delivered": "\(delivered)",
                "known_head": "\(knownHead)", "halted": "\(halted)", "consumers": "\(attempts)"])
        case .resumed(let namespace, let position):
            logger.notice("cluster.follow_resumed: entries of the log reach this replica again",
                          metadata: ["namespace": "\(namespace)", "position": "\(position)"])
        case .appendMissing(let namespace, let position, let ids):
            logger.warning("""
                cluster.append_missing: an append JetStream acknowledged is missing from the stream leader's copy; \
                it was published again
                """, metadata: ["namespace": "\(namespace)", "position": "\(position)",
                                "ids": "\(ids.joined(separator: ","))"])
        case .readFromLeader(let namespace, let first, let last):
            logger.notice("cluster.read_from_leader: following stalled; entries were read from the stream leader",
                          metadata: ["namespace": "\(namespace)", "first": "\(first)", "last": "\(last)"])
        }
    }
}
