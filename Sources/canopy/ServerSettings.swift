import ArgumentParser
import HTTP1
import HTTPServer
import Transport

/// Turns the operator's configuration, already range-checked (``ConfigurationValidation``), into the server's typed
/// configuration.
enum ServerSettings {
    static func make(from settings: CanopyConfiguration) throws -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.host = settings.server.host
        configuration.port = UInt16(settings.server.port)
        configuration.eventLoops = settings.server.eventLoops
        configuration.maxConnections = settings.server.maxConnections
        configuration.idleTimeoutSeconds = settings.server.idleTimeoutSeconds
        configuration.handshakeTimeoutSeconds = settings.server.handshakeTimeoutSeconds
        configuration.shutdownDeadlineSeconds = settings.server.shutdownDeadlineSeconds
        configuration.httpLimits = HTTPLimits(
            maxRequestLineBytes: settings.server.maxRequestLineBytes, maxHeaderBytes: settings.server.maxHeaderBytes,
            maxBodyBytes: settings.server.maxBodyBytes)
        configuration.allowedOrigins = settings.server.allowedOrigins
        if settings.server.maxInboundBytesPerSecond > 0 {
            configuration.inboundRateLimit = InboundRateLimit(
                bytesPerSecond: settings.server.maxInboundBytesPerSecond, burstBytes: settings.server.inboundBurstBytes,
                maxThrottledNanoseconds: MonotonicClock.nanoseconds(fromSeconds: settings.server.inboundThrottleSeconds))
        }
        configuration.echoPath = settings.server.echoPath
        configuration.broadcastPath = settings.server.broadcastPath
        configuration.maxWebSocketMessageBytes = settings.webSocket.maxMessageBytes
        configuration.permessageDeflate = settings.webSocket.permessageDeflate
        configuration.compressionThresholdBytes = settings.webSocket.compressionThresholdBytes
        configuration.outboundLimits = OutboundLimits(
            lowWaterMark: settings.outbound.lowWaterMarkBytes, highWaterMark: settings.outbound.highWaterMarkBytes,
            hardLimit: settings.outbound.hardLimitBytes)
        if settings.tls.enabled {
            guard !settings.tls.certificate.isEmpty, !settings.tls.privateKey.isEmpty else {
                throw ValidationError("tls.certificate and tls.privateKey are required when TLS is enabled")
            }
            configuration.tls = TLSListenerConfiguration(
                port: UInt16(settings.tls.port), certificatePath: settings.tls.certificate,
                privateKeyPath: settings.tls.privateKey)
        }
        return configuration
    }
}
