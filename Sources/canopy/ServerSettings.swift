import ArgumentParser
import HTTP1
import HTTPServer
import Transport

/// Turns the operator's configuration into the server's typed configuration, validating ranges.
enum ServerSettings {
    static func make(from settings: CanopyConfiguration) throws -> ServerConfiguration {
        var configuration = ServerConfiguration()
        guard (0...65535).contains(settings.server.port) else { throw ValidationError("server.port must be 0...65535") }
        configuration.host = settings.server.host
        configuration.port = UInt16(settings.server.port)
        configuration.eventLoops = max(0, settings.server.eventLoops)
        configuration.maxConnections = max(1, settings.server.maxConnections)
        for (name, value) in [
            ("server.idleTimeoutSeconds", settings.server.idleTimeoutSeconds),
            ("server.handshakeTimeoutSeconds", settings.server.handshakeTimeoutSeconds),
            ("server.shutdownDeadlineSeconds", settings.server.shutdownDeadlineSeconds),
        ] where !(value >= 0 && value <= 86_400) {
            throw ValidationError("\(name) must be between 0 and 86400 seconds")
        }
        configuration.idleTimeoutSeconds = settings.server.idleTimeoutSeconds
        configuration.handshakeTimeoutSeconds = settings.server.handshakeTimeoutSeconds
        configuration.shutdownDeadlineSeconds = settings.server.shutdownDeadlineSeconds
        configuration.httpLimits = HTTPLimits(
            maxRequestLineBytes: settings.server.maxRequestLineBytes, maxHeaderBytes: settings.server.maxHeaderBytes,
            maxBodyBytes: settings.server.maxBodyBytes)
        configuration.allowedOrigins = settings.server.allowedOrigins
        configuration.echoPath = settings.server.echoPath
        configuration.broadcastPath = settings.server.broadcastPath
        configuration.maxWebSocketMessageBytes = settings.webSocket.maxMessageBytes
        configuration.permessageDeflate = settings.webSocket.permessageDeflate
        guard settings.webSocket.compressionThresholdBytes >= 0 else {
            throw ValidationError("webSocket.compressionThresholdBytes must not be negative")
        }
        configuration.compressionThresholdBytes = settings.webSocket.compressionThresholdBytes
        configuration.outboundLimits = OutboundLimits(
            lowWaterMark: settings.outbound.lowWaterMarkBytes, highWaterMark: settings.outbound.highWaterMarkBytes,
            hardLimit: settings.outbound.hardLimitBytes)
        if settings.tls.enabled {
            guard (0...65535).contains(settings.tls.port) else { throw ValidationError("tls.port must be 0...65535") }
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
