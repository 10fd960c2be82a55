/// What a protocol layer implements to receive a connection's events.
///
/// Every method is called on the connection's event-loop queue, which owns the handler's state too.
public protocol ConnectionHandler: AnyObject {
    /// Bytes arrived. The buffer is only valid during the call (it is the loop's reusable read buffer).
    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer)

    /// Nothing was read for the configured idle timeout. The default closes the connection; a
    /// WebSocket layer sends a ping instead and closes on the next idle period.
    func connectionDidBecomeIdle(_ connection: Connection)

    /// Pending outbound bytes passed the hard limit. The default closes the connection with
    /// `.slowConsumer`; a WebSocket layer first queues a close frame.
    func connectionDidExceedOutboundLimit(_ connection: Connection)

    /// The peer kept sending faster than the connection's ``InboundRateLimit`` for too long. The default closes the
    /// connection with `.inboundRateExceeded`; a WebSocket layer first queues a close frame.
    func connectionDidExceedInboundRate(_ connection: Connection)

    /// Pending outbound bytes fell back below the low-water mark after having been above it.
    func connectionDidDrain(_ connection: Connection)

    /// The server is shutting down; say goodbye (e.g. WebSocket close 1001) and close.
    func connectionShouldShutDown(_ connection: Connection)

    /// The connection is closed and its descriptor released; no further events follow.
    func connectionDidClose(_ connection: Connection, reason: CloseReason)
}

extension ConnectionHandler {
    public func connectionDidBecomeIdle(_ connection: Connection) {
        connection.close(reason: .idleTimeout)
    }

    public func connectionDidExceedOutboundLimit(_ connection: Connection) {
        connection.close(reason: .slowConsumer)
    }

    public func connectionDidExceedInboundRate(_ connection: Connection) {
        connection.close(reason: .inboundRateExceeded)
    }

    public func connectionDidDrain(_ connection: Connection) {}

    public func connectionShouldShutDown(_ connection: Connection) {
        connection.close(reason: .shutdown)
    }
}
