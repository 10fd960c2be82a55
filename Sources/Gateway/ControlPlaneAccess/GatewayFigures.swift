/// The data plane's figures at one moment, read from counters (nothing on the hot paths), for the control plane's
/// charts. The totals only grow; the control plane turns them into rates.
public struct GatewayFigures: Sendable {
    /// Live connections (the HTTP server's, or the wire sessions' before a server reports its figures).
    public let connections: Int
    /// Listens held by all wire sessions.
    public let listens: Int
    /// Live views of every open namespace.
    public let views: Int
    /// Writes acknowledged so far.
    public let writes: UInt64
    /// Pushes handed to connections so far.
    public let deliveries: UInt64
    /// Bytes the server's event loops wrote so far.
    public let bytesWritten: UInt64
    /// Slow consumers dropped so far.
    public let slowConsumersDropped: UInt64
}
