import Auth
import Gateway
import HTTP1
import HTTPServer
import Settings
import Testing
import Transport

/// The components keep defaults of their own (for embedding and their tests; `canopy serve` sets every one from the
/// settings): they must be the table's.
@Suite("Component defaults")
struct ComponentDefaultsTests {
    @Test("the components' defaults are the table's")
    func componentDefaults() {
        let server = ServerConfiguration()
        typealias Table = SettingsTable
        #expect(server.host == Table.Server.host.defaultValue)
        #expect(Int(server.port) == Table.Server.port.defaultValue)
        #expect(server.eventLoops == Table.Server.eventLoops.defaultValue)
        #expect(server.maxConnections == Table.Server.maxConnections.defaultValue)
        #expect(server.idleTimeoutSeconds == Table.Server.idleTimeoutSeconds.defaultValue)
        #expect(server.handshakeTimeoutSeconds == Table.Server.handshakeTimeoutSeconds.defaultValue)
        #expect(server.shutdownDeadlineSeconds == Table.Server.shutdownDeadlineSeconds.defaultValue)
        #expect(server.httpLimits.maxRequestLineBytes == Table.Server.maxRequestLineBytes.defaultValue)
        #expect(server.httpLimits.maxHeaderBytes == Table.Server.maxHeaderBytes.defaultValue)
        #expect(server.httpLimits.maxBodyBytes == Table.Server.maxBodyBytes.defaultValue)
        #expect(server.maxWebSocketMessageBytes == Table.WebSocket.maxMessageBytes.defaultValue)
        #expect(server.permessageDeflate == Table.WebSocket.permessageDeflate.defaultValue)
        #expect(server.compressionThresholdBytes == Table.WebSocket.compressionThresholdBytes.defaultValue)
        #expect(server.outboundLimits.lowWaterMark == Table.Outbound.lowWaterMarkBytes.defaultValue)
        #expect(server.outboundLimits.highWaterMark == Table.Outbound.highWaterMarkBytes.defaultValue)
        #expect(server.outboundLimits.hardLimit == Table.Outbound.hardLimitBytes.defaultValue)
        let gateway = GatewayConfiguration()
        #expect(gateway.maxNamespaces == Table.Data.maxNamespaces.defaultValue)
        #expect(gateway.defaultNamespace == Table.Data.defaultNamespace.defaultValue)
        #expect(gateway.conflationThresholdBytes == Table.Gateway.conflationThresholdBytes.defaultValue)
        #expect(gateway.maxListensPerConnection == Table.Gateway.maxListensPerConnection.defaultValue)
        #expect(gateway.maxOnDisconnectPerConnection == Table.Gateway.maxOnDisconnectPerConnection.defaultValue)
        #expect(gateway.maxAuthAttemptsPerSecond == Table.Gateway.maxAuthAttemptsPerSecond.defaultValue)
        #expect(gateway.maxOutstandingRequestsPerConnection
            == Table.Gateway.maxOutstandingRequestsPerConnection.defaultValue)
        #expect(gateway.streamKeepAliveSeconds == Table.REST.keepAliveSeconds.defaultValue)
        #expect(gateway.streamCutOffBytes == Table.Outbound.highWaterMarkBytes.defaultValue)
        #expect(gateway.restRequiresIndexes == Table.REST.requireIndexes.defaultValue)
        let longPoll = LongPollSettings()
        #expect(longPoll.holdSeconds == Table.Gateway.longPollHoldSeconds.defaultValue)
        #expect(longPoll.idleTimeoutSeconds == Table.Gateway.longPollIdleTimeoutSeconds.defaultValue)
        #expect(longPoll.outboxLimitBytes == Table.Outbound.hardLimitBytes.defaultValue)
        #expect(longPoll.inboundBytesPerSecond == Table.Server.maxInboundBytesPerSecond.defaultValue)
        #expect(longPoll.inboundBurstBytes == Table.Server.inboundBurstBytes.defaultValue)
        #expect(longPoll.inboundThrottleSeconds == Table.Server.inboundThrottleSeconds.defaultValue)
    }

    @Test("the token verifier's defaults are the table's")
    func authDefaults() {
        #expect(AuthConfiguration.defaultClockSkewSeconds == SettingsTable.Auth.clockSkewSeconds.defaultValue)
        let keys = RemoteKeySource(url: "https://example.invalid/keys") { _ throws(KeyDocumentFetchError) in
            throw KeyDocumentFetchError("not fetched")
        }
        #expect(keys.minimumRefreshSeconds == SettingsTable.Auth.keysMinRefreshSeconds.defaultValue)
        #expect(keys.fetchTimeoutSeconds == SettingsTable.Auth.keysFetchTimeoutSeconds.defaultValue)
    }
}
