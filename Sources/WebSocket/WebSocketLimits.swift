/// Size limits a connection enforces on what it receives; exceeding one fails the connection with 1009.
public struct WebSocketLimits: Sendable, Hashable {
    /// Default for ``maxMessageBytes``: 16 MiB.
    ///
    /// Firebase SDK writes are limited to 16 MB, and the SDKs split large messages into frames themselves, so no
    /// legitimate client needs more; Autobahn's largest cases (9.1.6, 9.2.6) send exactly 16 MiB and must pass.
    public static let defaultMaxMessageBytes = 16 * 1024 * 1024
    /// Default for ``maxFrameBytes``: the same as ``defaultMaxMessageBytes``, so a single-frame message can reach
    /// the message limit.
    public static let defaultMaxFrameBytes = defaultMaxMessageBytes

    /// Largest payload of a single frame as it appears on the wire (compressed, if compressed), checked as soon as
    /// the header arrives so an announced huge frame is refused before any payload is read.
    public var maxFrameBytes: Int
    /// Largest payload of a whole message after reassembly and decompression; bounds both memory per connection and
    /// the output of the inflater (so a small compressed frame cannot expand into gigabytes).
    public var maxMessageBytes: Int

    /// Creates limits; both must be positive.
    public init(maxFrameBytes: Int = defaultMaxFrameBytes, maxMessageBytes: Int = defaultMaxMessageBytes) {
        precondition(maxFrameBytes > 0 && maxMessageBytes > 0, "WebSocket limits must be positive")
        self.maxFrameBytes = maxFrameBytes
        self.maxMessageBytes = maxMessageBytes
    }
}
