/// How fast a peer may send, per connection: a token bucket of bytes.
///
/// A connection that has used up its bucket is not read until the bucket refills, so the peer is slowed by TCP's
/// own flow control; one that stays throttled for ``maxThrottledNanoseconds`` with data always waiting (its socket
/// never drained by a read) is closed with ``CloseReason/inboundRateExceeded``.
public struct InboundRateLimit: Sendable, Equatable {
    /// Bytes a second the bucket refills with.
    public var bytesPerSecond: Int
    /// Bytes the bucket holds at most (what a quiet peer may send at once).
    public var burstBytes: Int
    /// How long a peer may stay throttled without pause before it is closed.
    public var maxThrottledNanoseconds: UInt64

    /// A limit; `bytesPerSecond` and `burstBytes` are at least 1.
    public init(bytesPerSecond: Int, burstBytes: Int, maxThrottledNanoseconds: UInt64) {
        self.bytesPerSecond = max(1, bytesPerSecond)
        self.burstBytes = max(1, burstBytes)
        self.maxThrottledNanoseconds = maxThrottledNanoseconds
    }
}

/// A connection's inbound bucket, filled by its policy's ``InboundRateLimit`` (passed in, not kept: a copy per
/// connection would cost every idle one): owned by the connection's loop.
struct InboundBucket {
    private var tokens: Double
    private var refilledAt: UInt64
    /// When the connection was first throttled without its socket draining since; 0 when not throttled (an
    /// optional would take 8 more bytes of every connection).
    private var throttledSince: UInt64 = 0

    init(limit: InboundRateLimit, now: UInt64) {
        tokens = Double(limit.burstBytes)
        refilledAt = now
    }

    /// Whether the bucket has nothing left: reading must wait.
    var isEmpty: Bool { tokens < 0 }

    /// Takes `count` bytes read at `now`; returns `true` when the bucket ran dry.
    mutating func take(_ count: Int, now: UInt64, limit: InboundRateLimit) -> Bool {
        refill(now: now, limit: limit)
        tokens -= Double(count)
        guard tokens < 0 else { return false }
        if throttledSince == 0 { throttledSince = max(now, 1) }
        return true
    }

    /// Everything the peer sent was read: whatever it overdrew, it is not flooding (it waits, reading pauses until
    /// the bucket refills, but that does not count towards closing it).
    mutating func socketDrained() {
        throttledSince = 0
    }

    /// Whether, at `now`, the connection has been throttled too long without its socket draining.
    func isThrottledTooLong(now: UInt64, limit: InboundRateLimit) -> Bool {
        guard throttledSince != 0 else { return false }
        return now &- throttledSince >= limit.maxThrottledNanoseconds
    }

    /// Adds what the time up to `now` earned.
    mutating func refill(now: UInt64, limit: InboundRateLimit) {
        if now > refilledAt {
            tokens = min(Double(limit.burstBytes), tokens + Double(now - refilledAt) / 1e9 * Double(limit.bytesPerSecond))
        }
        refilledAt = now
    }
}
