/// How a server holds its connections: outbound water marks, the idle timeout and the inbound rate limit.
///
/// Immutable and shared: every connection of a server refers to one instance instead of carrying a copy, which an
/// idle connection would pay for in memory.
public final class ConnectionPolicy: Sendable {
    /// Outbound water marks.
    public let limits: OutboundLimits
    /// Close (or notify the handler) after this long without reading anything; 0 disables it.
    public let idleTimeoutNanoseconds: UInt64
    /// How fast the peer may send; `nil`: as fast as it likes.
    public let inboundRateLimit: InboundRateLimit?

    /// A policy; the defaults are the default water marks, no idle timeout and no inbound limit.
    public init(limits: OutboundLimits = OutboundLimits(), idleTimeoutNanoseconds: UInt64 = 0,
                inboundRateLimit: InboundRateLimit? = nil)
    {
        self.limits = limits
        self.idleTimeoutNanoseconds = idleTimeoutNanoseconds
        self.inboundRateLimit = inboundRateLimit
    }

    /// The default water marks, no idle timeout, no inbound limit.
    public static let standard = ConnectionPolicy()
}
