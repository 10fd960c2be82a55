import Gateway
import Logging

/// Every configuration value's range, checked at start after the file, the environment and the flags are merged,
/// so that no value reaches a component that would trap or misbehave on it. Each problem names its key.
enum ConfigurationValidation {
    /// Largest byte size any limit may have (1 GiB).
    static let maxBytes = 1 << 30

    /// The problems of `settings`, one line each (empty when every value is in range).
    static func problems(in settings: CanopyConfiguration) -> [String] {
        var problems: [String] = []
        func check(_ key: String, _ value: Int, _ range: ClosedRange<Int>) {
            if !range.contains(value) { problems.append("\(key) must be \(range.lowerBound)…\(range.upperBound), not \(value)") }
        }
        func check(_ key: String, _ value: Double, _ range: ClosedRange<Double>) {
            if !(value.isFinite && range.contains(value)) {
                problems.append("\(key) must be \(range.lowerBound)…\(range.upperBound), not \(value)")
            }
        }
        func check(_ key: String, _ value: String, in allowed: [String]) {
            if !allowed.contains(value.lowercased()) {
                problems.append("\(key) must be one of \(allowed.joined(separator: ", ")), not \"\(value.prefix(40))\"")
            }
        }
        let server = settings.server
        check("server.port", server.port, 0...65_535)
        check("server.eventLoops", server.eventLoops, 0...256)
        check("server.maxConnections", server.maxConnections, 1...10_000_000)
        check("server.idleTimeoutSeconds", server.idleTimeoutSeconds, 0...86_400)
        check("server.handshakeTimeoutSeconds", server.handshakeTimeoutSeconds, 0...86_400)
        check("server.shutdownDeadlineSeconds", server.shutdownDeadlineSeconds, 0...86_400)
        check("server.maxRequestLineBytes", server.maxRequestLineBytes, 64...1 << 20)
        check("server.maxHeaderBytes", server.maxHeaderBytes, 256...1 << 20)
        check("server.maxBodyBytes", server.maxBodyBytes, 1...maxBytes)
        check("server.maxInboundBytesPerSecond", server.maxInboundBytesPerSecond, 0...maxBytes)
        check("server.inboundBurstBytes", server.inboundBurstBytes, 1...maxBytes)
        check("server.inboundThrottleSeconds", server.inboundThrottleSeconds, 0.1...86_400)
        if server.host.isEmpty { problems.append("server.host must not be empty") }
        check("webSocket.maxMessageBytes", settings.webSocket.maxMessageBytes, 1...maxBytes)
        check("webSocket.compressionThresholdBytes", settings.webSocket.compressionThresholdBytes, 0...maxBytes)
        let outbound = settings.outbound
        check("outbound.lowWaterMarkBytes", outbound.lowWaterMarkBytes, 1...maxBytes)
        check("outbound.highWaterMarkBytes", outbound.highWaterMarkBytes, max(1, outbound.lowWaterMarkBytes)...maxBytes)
        check("outbound.hardLimitBytes", outbound.hardLimitBytes, max(1, outbound.highWaterMarkBytes)...maxBytes)
        check("tls.port", settings.tls.port, 0...65_535)
        if settings.data.directory.isEmpty { problems.append("data.directory must not be empty") }
        check("data.maxNamespaces", settings.data.maxNamespaces, 1...100_000)
        for entry in settings.data.namespaces where !NamespaceAllowList.isValidEntry(entry) {
            problems.append("data.namespaces entries must be 1-63 of a-z A-Z 0-9 - _ *, not \"\(entry.prefix(80))\"")
        }
        check("auth.clockSkewSeconds", settings.auth.clockSkewSeconds, 0...3_600)
        check("auth.keysMinRefreshSeconds", settings.auth.keysMinRefreshSeconds, 0...86_400)
        check("auth.keysFetchTimeoutSeconds", settings.auth.keysFetchTimeoutSeconds, 0.1...300)
        for (key, url) in [("auth.jwksURL", settings.auth.jwksURL), ("appCheck.jwksURL", settings.appCheck.jwksURL)] {
            if let url, !url.lowercased().hasPrefix("https://") {
                problems.append("\(key) must be an https:// URL, not \"\(url.prefix(80))\"")
            }
        }
        check("appCheck.mode", settings.appCheck.mode, in: AppCheckPolicy.Mode.allCases.map(\.rawValue))
        if let number = settings.appCheck.projectNumber, number.isEmpty || !number.allSatisfy({ $0.isASCII && $0.isNumber }) {
            problems.append("appCheck.projectNumber must be the project's number (digits), not \"\(number.prefix(40))\"")
        }
        check("gateway.conflationThresholdBytes", settings.gateway.conflationThresholdBytes, 0...maxBytes)
        check("gateway.maxListensPerConnection", settings.gateway.maxListensPerConnection, 1...10_000_000)
        check("gateway.maxOnDisconnectPerConnection", settings.gateway.maxOnDisconnectPerConnection, 1...10_000_000)
        check("gateway.maxAuthAttemptsPerSecond", settings.gateway.maxAuthAttemptsPerSecond, 1...10_000)
        check("gateway.maxOutstandingRequestsPerConnection", settings.gateway.maxOutstandingRequestsPerConnection,
              1...10_000_000)
        check("gateway.longPollIdleTimeoutSeconds", settings.gateway.longPollIdleTimeoutSeconds, 0.5...3_600)
        check("gateway.longPollHoldSeconds", settings.gateway.longPollHoldSeconds,
              0.1...max(0.1, settings.gateway.longPollIdleTimeoutSeconds * 0.9))
        check("rest.keepAliveSeconds", settings.rest.keepAliveSeconds, 0.001...3_600)
        check("log.format", settings.log.format, in: ["text", "json"])
        check("log.level", settings.log.level, in: Logger.Level.allCases.map(\.rawValue))
        check("cluster.replicas", settings.cluster.replicas, 1...5)
        check("cluster.snapshotEvery", settings.cluster.snapshotEvery, 0...Int(Int32.max))
        return problems
    }
}
