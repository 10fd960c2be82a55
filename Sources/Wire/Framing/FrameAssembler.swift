/// Turns a client's WebSocket text frames into complete messages (wire-protocol.md §2.1).
///
/// The SDKs serialize a message, cut it into pieces of at most 16384 UTF-16 code units and, when there is more than
/// one piece, send the piece count as a frame of decimal digits first. They also send the single character `0` as a
/// keepalive after 45 s of silence. Per frame:
///
/// - while a count is pending, the frame is the next piece, whatever it contains;
/// - `0` is a keepalive;
/// - digits (optionally signed) announce a count, checked against ``Limits/maxFrameCount``;
/// - anything else is one complete message.
///
/// Limits are checked as bytes arrive, so a hostile count never makes the assembler hold more than
/// ``Limits/maxMessageBytes``. After an error the assembler is idle again, but the frames still in flight would be
/// misread: the gateway closes the connection on any error thrown here.
public struct FrameAssembler: Sendable {
    /// Bounds on what one client message may cost.
    public struct Limits: Sendable, Equatable {
        /// Largest message accepted, in bytes, counting all its pieces: Firebase's 16 MB write limit for SDK
        /// connections (data-model.md §6) plus 1 MiB for the envelope and JSON escaping.
        public static let defaultMaxMessageBytes = 17 * 1024 * 1024
        /// Most pieces one message may announce: what iOS accepts from servers (4 count digits), and far above the
        /// ~1,100 pieces an honest client needs for ``defaultMaxMessageBytes``.
        public static let defaultMaxFrameCount = 9999

        /// Largest message, in bytes.
        public var maxMessageBytes: Int {
            get { Int(storedMaxMessageBytes) }
            set { storedMaxMessageBytes = Self.narrowed(newValue) }
        }
        /// Most pieces per message.
        public var maxFrameCount: Int {
            get { Int(storedMaxFrameCount) }
            set { storedMaxFrameCount = Self.narrowed(newValue) }
        }

        // In 32 bits: every wire session carries an assembler, and so these. A limit past `Int32.max` is kept as
        // `Int32.max`, which no message a connection can carry reaches.
        private var storedMaxMessageBytes: Int32
        private var storedMaxFrameCount: Int32

        private static func narrowed(_ value: Int) -> Int32 { Int32(clamping: value) }

        /// Creates limits; both default to the values above.
        public init(maxMessageBytes: Int = defaultMaxMessageBytes, maxFrameCount: Int = defaultMaxFrameCount) {
            precondition(maxMessageBytes > 0 && maxFrameCount > 0, "frame limits are positive")
            storedMaxMessageBytes = Self.narrowed(maxMessageBytes)
            storedMaxFrameCount = Self.narrowed(maxFrameCount)
        }
    }

    /// What one frame amounted to.
    public enum Output: Sendable, Equatable {
        /// A keepalive frame (`0`); nothing to answer.
        case keepalive
        /// Part of a split message; `remainingFrames` more pieces are expected.
        case pending(remainingFrames: Int)
        /// A complete message (JSON text, not yet parsed).
        case message([UInt8])
    }

    /// The limits in force.
    public let limits: Limits
    private var pieces: [UInt8] = []
    /// Pieces still expected of the message being assembled (at most ``Limits/maxFrameCount``, in 32 bits).
    private var remainingFrames: Int32 = 0

    /// An idle assembler.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Whether a split message is partly received.
    public var isAssembling: Bool { remainingFrames > 0 }

    /// Consumes one text frame's payload.
    ///
    /// - Throws: ``WireError/invalidFrameCount(_:)``, ``WireError/tooManyFrames(announced:limit:)`` or
    ///   ``WireError/messageTooLarge(limit:)``; the assembler is idle afterwards.
    public mutating func receive(_ frame: [UInt8]) throws(WireError) -> Output {
        if remainingFrames > 0 {
            guard frame.count <= limits.maxMessageBytes - pieces.count else {
                reset()
                throw .messageTooLarge(limit: limits.maxMessageBytes)
            }
            pieces.append(contentsOf: frame)
            remainingFrames -= 1
            guard remainingFrames == 0 else { return .pending(remainingFrames: Int(remainingFrames)) }
            let message = pieces
            pieces = []
            return .message(message)
        }
        if frame.count == 1 && frame[0] == UInt8(ascii: "0") { return .keepalive }
        if let count = try frameCount(frame) {
            remainingFrames = Int32(clamping: count)
            return .pending(remainingFrames: count)
        }
        guard frame.count <= limits.maxMessageBytes else { throw .messageTooLarge(limit: limits.maxMessageBytes) }
        return .message(frame)
    }

    /// Drops a partly received message.
    public mutating func reset() {
        pieces = []
        remainingFrames = 0
    }

    /// The count announced by `frame` if it is a count frame (`-`? digits), `nil` if it is a message.
    private func frameCount(_ frame: [UInt8]) throws(WireError) -> Int? {
        guard let first = frame.first else { return nil }
        let negative = first == UInt8(ascii: "-")
        let digits = frame[(negative ? 1 : 0)...]
        guard !digits.isEmpty, digits.allSatisfy({ $0 &- UInt8(ascii: "0") < 10 }) else { return nil }
        let text = String(decoding: frame.prefix(32), as: UTF8.self)
        if negative { throw .invalidFrameCount(text) }
        let significant = digits.drop { $0 == UInt8(ascii: "0") }
        guard significant.count <= 18 else { throw .tooManyFrames(announced: nil, limit: limits.maxFrameCount) }
        let count = significant.reduce(0) { $0 * 10 + Int($1 &- UInt8(ascii: "0")) }
        guard count > 0 else { throw .invalidFrameCount(text) }
        guard count <= limits.maxFrameCount else {
            throw .tooManyFrames(announced: count, limit: limits.maxFrameCount)
        }
        return count
    }
}
