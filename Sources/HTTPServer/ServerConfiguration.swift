import HTTP1
import Transport

/// Everything the HTTP/WebSocket server needs to know, with the limits that protect it.
public struct ServerConfiguration: Sendable {
    /// Address to listen on. Default `127.0.0.1`.
    public var host = "127.0.0.1"
    /// Port to listen on; 0 picks any free port. Default 9000.
    public var port: UInt16 = 9000
    /// Optional TLS listener (HTTPS/WSS) beside the plain one.
    public var tls: TLSListenerConfiguration?
    /// Event loops (serial queues); 0 means one per core.
    public var eventLoops = 0
    /// Live connections above which new peers get 503. Default 50,000.
    public var maxConnections = 50_000
    /// Close a connection after this long without input (WebSocket peers are pinged first). Default 120 s.
    public var idleTimeoutSeconds: Double = 120
    /// A peer must complete its request head (and TLS handshake) within this time (slowloris). Default 10 s.
    public var handshakeTimeoutSeconds: Double = 10
    /// HTTP parser limits (request line, header bytes, body bytes).
    public var httpLimits = HTTPLimits()
    /// Largest WebSocket message accepted (after inflation), in bytes. Default 16 MiB.
    public var maxWebSocketMessageBytes = 16 * 1024 * 1024
    /// Whether permessage-deflate is offered to clients that ask. Default true.
    public var permessageDeflate = true
    /// Outbound messages smaller than this are sent uncompressed. Default 64 bytes.
    public var compressionThresholdBytes = 64
    /// Allowed `Origin` values for WebSocket upgrades; empty allows any.
    public var allowedOrigins: [String] = []
    /// How fast each peer may send; `nil`: no limit.
    public var inboundRateLimit: InboundRateLimit?
    /// Outbound water marks per connection.
    public var outboundLimits = OutboundLimits()
    /// Graceful shutdown waits at most this long for peers to close. Default 10 s.
    public var shutdownDeadlineSeconds: Double = 10
    /// WebSocket echo endpoint for the conformance suite; off (`nil`) by default.
    public var echoPath: String?
    /// WebSocket broadcast endpoint for transport benchmarks; off (`nil`) by default.
    public var broadcastPath: String?

    /// Creates the default configuration.
    public init() {}
}

/// Certificate and key for the HTTPS/WSS listener.
public struct TLSListenerConfiguration: Sendable {
    /// Port of the TLS listener; 0 picks any free port.
    public var port: UInt16
    /// PEM certificate chain file.
    public var certificatePath: String
    /// PEM private key file.
    public var privateKeyPath: String

    /// Creates a TLS listener configuration.
    public init(port: UInt16, certificatePath: String, privateKeyPath: String) {
        self.port = port
        self.certificatePath = certificatePath
        self.privateKeyPath = privateKeyPath
    }
}
