/// Water marks for a connection's pending outbound bytes.
///
/// Above `highWaterMark` the connection stops reading its peer's requests (a client that does not
/// read its responses cannot make us queue more); below `lowWaterMark` it resumes and the handler
/// hears `connectionDidDrain`; past `hardLimit` the handler hears `connectionDidExceedOutboundLimit`
/// and the connection is cut off, so one slow reader never grows memory without bound.
public struct OutboundLimits: Sendable, Equatable {
    /// Resume reading / report drained below this many pending bytes. Default 256 KiB.
    public var lowWaterMark: Int
    /// Stop reading above this many pending bytes. Default 1 MiB.
    public var highWaterMark: Int
    /// Cut the connection off above this many pending bytes. Default 8 MiB.
    public var hardLimit: Int

    /// Creates limits; defaults suit WebSocket fan-out of small messages.
    public init(lowWaterMark: Int = 256 * 1024, highWaterMark: Int = 1024 * 1024, hardLimit: Int = 8 * 1024 * 1024) {
        self.lowWaterMark = lowWaterMark
        self.highWaterMark = max(highWaterMark, lowWaterMark)
        self.hardLimit = max(hardLimit, self.highWaterMark)
    }
}
