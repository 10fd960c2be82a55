/// The long-poll transport's timing and limits (long-polling.md §4, §5, §8).
public struct LongPollSettings: Sendable {
    /// How long a poll is held before it is answered empty (`gateway.longPollHoldSeconds`); the SDK replaces a poll
    /// after 25 s anyway.
    public var holdSeconds: Double
    /// A session without a request for this long has gone (`gateway.longPollIdleTimeoutSeconds`).
    public var idleTimeoutSeconds: Double
    /// Messages waiting for a poll beyond this many bytes end the session as a slow consumer (the WebSocket's
    /// `outbound.hardLimitBytes`).
    public var outboxLimitBytes: Int
    /// Segment bytes a second a session may send (`server.maxInboundBytesPerSecond`; 0: unlimited), with bursts of
    /// `inboundBurstBytes`; a session throttled for `inboundThrottleSeconds` without pause is ended.
    public var inboundBytesPerSecond: Int
    public var inboundBurstBytes: Int
    public var inboundThrottleSeconds: Double

    /// Settings; the defaults are the configuration's.
    public init(holdSeconds: Double = 20, idleTimeoutSeconds: Double = 30, outboxLimitBytes: Int = 8 << 20,
                inboundBytesPerSecond: Int = 8 << 20, inboundBurstBytes: Int = 32 << 20, inboundThrottleSeconds: Double = 30)
    {
        self.holdSeconds = holdSeconds
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.outboxLimitBytes = outboxLimitBytes
        self.inboundBytesPerSecond = inboundBytesPerSecond
        self.inboundBurstBytes = inboundBurstBytes
        self.inboundThrottleSeconds = inboundThrottleSeconds
    }
}
