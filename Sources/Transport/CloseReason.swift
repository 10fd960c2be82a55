/// Why a connection ended; logged and counted for every close (like nats's `ClosedState`).
public enum CloseReason: Sendable, Equatable, CustomStringConvertible {
    /// The peer closed its side (read returned 0).
    case peerClosed
    /// The upper layer closed the connection (protocol finished or rejected the peer).
    case local(String)
    /// A read or write failed.
    case ioError(SystemCallError)
    /// The peer did not finish its handshake before the handshake deadline (slowloris).
    case handshakeTimeout
    /// Nothing was received for the idle timeout.
    case idleTimeout
    /// The peer read too slowly: pending outbound bytes passed the hard limit.
    case slowConsumer
    /// The peer sent faster than its ``InboundRateLimit`` for too long.
    case inboundRateExceeded
    /// The server is shutting down.
    case shutdown

    public var description: String {
        switch self {
        case .peerClosed: "peer closed"
        case .local(let why): why
        case .ioError(let error): error.description
        case .handshakeTimeout: "handshake timeout"
        case .idleTimeout: "idle timeout"
        case .slowConsumer: "slow consumer"
        case .inboundRateExceeded: "inbound rate limit exceeded"
        case .shutdown: "shutdown"
        }
    }

    /// A short stable label for metrics.
    public var label: String {
        switch self {
        case .peerClosed: "peer_closed"
        case .local: "local"
        case .ioError: "io_error"
        case .handshakeTimeout: "handshake_timeout"
        case .idleTimeout: "idle_timeout"
        case .slowConsumer: "slow_consumer"
        case .inboundRateExceeded: "inbound_rate"
        case .shutdown: "shutdown"
        }
    }
}
