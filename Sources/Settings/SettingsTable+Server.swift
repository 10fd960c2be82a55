extension SettingsTable {
    /// The listeners and each connection's limits.
    public enum Server {
        public static let host = Setting(
            "server.host", default: "127.0.0.1", .nonEmpty, flag: "--host", doc: "address to listen on")
        public static let port = Setting(
            "server.port", default: 9000, .range(0...65_535), flag: "--port", doc: "port; `0` picks a free one")
        public static let eventLoops = Setting(
            "server.eventLoops", default: 0, .range(0...256), doc: "event loops; `0`: one per core")
        public static let maxConnections = Setting(
            "server.maxConnections", default: 50_000, .range(1...10_000_000), flag: "--max-connections",
            doc: "live connections beyond which new peers get HTTP 503")
        public static let idleTimeoutSeconds = Setting(
            "server.idleTimeoutSeconds", default: 120.0, .range(0...86_400),
            doc: "a connection without input for this long is closed (WebSocket peers are pinged first)")
        public static let handshakeTimeoutSeconds = Setting(
            "server.handshakeTimeoutSeconds", default: 10.0, .range(0...86_400),
            doc: "a peer must complete its request head and TLS handshake within this time")
        public static let shutdownDeadlineSeconds = Setting(
            "server.shutdownDeadlineSeconds", default: 10.0, .range(0...86_400),
            doc: "on SIGTERM/SIGINT, how long to wait for peers to close")
        public static let maxRequestLineBytes = Setting(
            "server.maxRequestLineBytes", default: 8192, .range(64...1 << 20), doc: "longest HTTP request line")
        public static let maxHeaderBytes = Setting(
            "server.maxHeaderBytes", default: 16_384, .range(256...1 << 20), doc: "largest HTTP request head")
        public static let maxBodyBytes = Setting(
            "server.maxBodyBytes", default: 16_777_216, .range(1...maxBytes), flag: "--max-body-bytes",
            doc: "largest request body; larger ones get 413")
        public static let allowedOrigins = Setting(
            "server.allowedOrigins", default: [String](),
            doc: "`Origin`s allowed to open a WebSocket; empty allows any")
        public static let maxInboundBytesPerSecond = Setting(
            "server.maxInboundBytesPerSecond", default: 8_388_608, .range(0...maxBytes),
            doc: "bytes a second each connection may send (`0`: no limit); beyond it the server stops reading it")
        public static let inboundBurstBytes = Setting(
            "server.inboundBurstBytes", default: 33_554_432, .range(1...maxBytes),
            doc: "bytes a connection may send at once above that rate")
        public static let inboundThrottleSeconds = Setting(
            "server.inboundThrottleSeconds", default: 30.0, .range(0.1...86_400),
            doc: "a connection throttled for this long without pause is closed")
        public static let echoPath = Setting<String?>(
            "server.echoPath", default: nil, flag: "--echo-path",
            doc: "WebSocket echo endpoint, for the conformance suite only")
        public static let broadcastPath = Setting<String?>(
            "server.broadcastPath", default: nil, flag: "--broadcast-path",
            doc: "WebSocket broadcast endpoint, for transport benchmarks only")

        static let all: [any AnySetting] = [
            host, port, eventLoops, maxConnections, idleTimeoutSeconds, handshakeTimeoutSeconds,
            shutdownDeadlineSeconds, maxRequestLineBytes, maxHeaderBytes, maxBodyBytes, allowedOrigins,
            maxInboundBytesPerSecond, inboundBurstBytes, inboundThrottleSeconds, echoPath, broadcastPath,
        ]
    }

    /// WebSocket messages.
    public enum WebSocket {
        public static let maxMessageBytes = Setting(
            "webSocket.maxMessageBytes", default: 16_777_216, .range(1...maxBytes),
            doc: "largest WebSocket message accepted (after inflation)")
        public static let permessageDeflate = Setting(
            "webSocket.permessageDeflate", default: true, doc: "offer permessage-deflate to clients that ask")
        public static let compressionThresholdBytes = Setting(
            "webSocket.compressionThresholdBytes", default: 64, .range(0...maxBytes),
            doc: "outbound messages smaller than this are sent uncompressed")

        static let all: [any AnySetting] = [maxMessageBytes, permessageDeflate, compressionThresholdBytes]
    }

    /// Each connection's unsent bytes.
    public enum Outbound {
        public static let lowWaterMarkBytes = Setting(
            "outbound.lowWaterMarkBytes", default: 262_144, .range(1...maxBytes),
            doc: "a connection whose unsent bytes fell below this is writable again")
        public static let highWaterMarkBytes = Setting(
            "outbound.highWaterMarkBytes", default: 1_048_576, .atLeast(lowWaterMarkBytes, upTo: maxBytes),
            doc: "unsent bytes above which a connection is not writable; an event stream is cut off there")
        public static let hardLimitBytes = Setting(
            "outbound.hardLimitBytes", default: 8_388_608, .atLeast(highWaterMarkBytes, upTo: maxBytes),
            doc: "unsent bytes at which a connection is closed as a slow consumer")

        static let all: [any AnySetting] = [lowWaterMarkBytes, highWaterMarkBytes, hardLimitBytes]
    }

    /// The HTTPS/WSS listener (TLS 1.2+).
    public enum TLS {
        public static let enabled = Setting(
            "tls.enabled", default: false, doc: "serve HTTPS/WSS beside the plain listener (`--tls-cert` sets it)")
        public static let port = Setting(
            "tls.port", default: 9443, .range(0...65_535), flag: "--tls-port",
            doc: "port of the HTTPS/WSS listener; `0` picks a free one")
        public static let certificate = Setting(
            "tls.certificate", default: "", flag: "--tls-cert", doc: "certificate chain file (PEM)")
        public static let privateKey = Setting(
            "tls.privateKey", default: "", flag: "--tls-key", doc: "private key file (PEM)")

        static let all: [any AnySetting] = [enabled, port, certificate, privateKey]
    }
}
