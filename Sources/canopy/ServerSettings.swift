import ArgumentParser
import HTTP1
import HTTPServer
import Settings
import Transport

/// Turns the operator's configuration, already range-checked (``SettingValues/problems``), into the server's typed
/// configuration.
enum ServerSettings {
    static func make(from settings: SettingValues) throws -> ServerConfiguration {
        typealias Server = SettingsTable.Server
        var configuration = ServerConfiguration()
        configuration.host = settings[Server.host]
        configuration.port = UInt16(settings[Server.port])
        configuration.eventLoops = settings[Server.eventLoops]
        configuration.maxConnections = settings[Server.maxConnections]
        configuration.idleTimeoutSeconds = settings[Server.idleTimeoutSeconds]
        configuration.handshakeTimeoutSeconds = settings[Server.handshakeTimeoutSeconds]
        configuration.shutdownDeadlineSeconds = settings[Server.shutdownDeadlineSeconds]
        configuration.httpLimits = HTTPLimits(
            maxRequestLineBytes: settings[Server.maxRequestLineBytes], maxHeaderBytes: settings[Server.maxHeaderBytes],
            maxBodyBytes: settings[Server.maxBodyBytes])
        configuration.allowedOrigins = settings[Server.allowedOrigins]
        if settings[Server.maxInboundBytesPerSecond] > 0 {
            configuration.inboundRateLimit = InboundRateLimit(
                bytesPerSecond: settings[Server.maxInboundBytesPerSecond], burstBytes: settings[Server.inboundBurstBytes],
                maxThrottledNanoseconds: MonotonicClock.nanoseconds(fromSeconds: settings[Server.inboundThrottleSeconds]))
        }
        configuration.echoPath = settings[Server.echoPath]
        configuration.broadcastPath = settings[Server.broadcastPath]
        configuration.maxWebSocketMessageBytes = settings[SettingsTable.WebSocket.maxMessageBytes]
        configuration.permessageDeflate = settings[SettingsTable.WebSocket.permessageDeflate]
        configuration.compressionThresholdBytes = settings[SettingsTable.WebSocket.compressionThresholdBytes]
        configuration.outboundLimits = OutboundLimits(
            lowWaterMark: settings[SettingsTable.Outbound.lowWaterMarkBytes],
            highWaterMark: settings[SettingsTable.Outbound.highWaterMarkBytes],
            hardLimit: settings[SettingsTable.Outbound.hardLimitBytes])
        if settings[SettingsTable.TLS.enabled] {
            guard !settings[SettingsTable.TLS.certificate].isEmpty, !settings[SettingsTable.TLS.privateKey].isEmpty else {
                throw ValidationError("tls.certificate and tls.privateKey are required when TLS is enabled")
            }
            configuration.tls = TLSListenerConfiguration(
                port: UInt16(settings[SettingsTable.TLS.port]), certificatePath: settings[SettingsTable.TLS.certificate],
                privateKeyPath: settings[SettingsTable.TLS.privateKey])
        }
        return configuration
    }
}
