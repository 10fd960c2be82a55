/// Cuts an outbound server message into the WebSocket text frames clients reassemble (wire-protocol.md §2.2).
///
/// A message of at most ``maxFrameUnits`` UTF-16 code units goes out as one frame. A longer one goes out as a
/// count frame (its decimal piece count) followed by the pieces, each at most ``maxFrameUnits`` code units — the
/// unit the SDKs count in (JS and Java strings) — and cut only between Unicode scalars, so every piece is valid UTF-8
/// on its own, as a WebSocket text frame must be (RFC 6455 §5.6).
public enum FrameSplitter {
    /// Largest piece, in UTF-16 code units: the SDKs' `WEBSOCKET_MAX_FRAME_SIZE` (JS `WebSocketConnection.ts`).
    public static let maxFrameUnits = 16384
    /// Most pieces per message: iOS reads a count only from frames of at most 4 characters.
    public static let maxFrameCount = 9999

    /// The frames to send for `message`, in order: `[message]` itself when it fits one frame (no copy), else the
    /// count frame and the pieces.
    ///
    /// - Parameters:
    ///   - message: a complete message, valid UTF-8 (this module's encoders produce it).
    ///   - maxFrameUnits: largest piece in UTF-16 code units, at least 2 (a surrogate pair).
    ///   - maxFrameCount: most pieces.
    /// - Throws: ``WireError/tooManyFramesToSend(needed:limit:)`` when the message needs more pieces; the gateway
    ///   answers such a read with `too_big` instead.
    public static func frames(
        for message: [UInt8], maxFrameUnits: Int = maxFrameUnits, maxFrameCount: Int = maxFrameCount
    ) throws(WireError) -> [[UInt8]] {
        precondition(maxFrameUnits >= 2, "a piece must hold a surrogate pair")
        // Every UTF-16 code unit takes at least one UTF-8 byte, so a message this short fits one frame.
        if message.count <= maxFrameUnits { return [message] }
        let starts = pieceStarts(message, maxFrameUnits: maxFrameUnits)
        if starts.count == 1 { return [message] }
        guard starts.count <= maxFrameCount else {
            throw .tooManyFramesToSend(needed: starts.count, limit: maxFrameCount)
        }
        var frames: [[UInt8]] = []
        frames.reserveCapacity(starts.count + 1)
        frames.append(Array(String(starts.count).utf8))
        for (index, start) in starts.enumerated() {
            let end = index + 1 < starts.count ? starts[index + 1] : message.count
            frames.append(Array(message[start..<end]))
        }
        return frames
    }

    /// Byte offsets where pieces start, cutting before the scalar that would overflow a piece.
    private static func pieceStarts(_ message: [UInt8], maxFrameUnits: Int) -> [Int] {
        var starts = [0]
        var units = 0
        for (offset, byte) in message.enumerated() {
            let scalarUnits: Int
            switch byte {
            case 0x80...0xBF: continue  // continuation byte: never a cut point, counted with its lead byte
            case 0xF0...0xFF: scalarUnits = 2  // four-byte sequence: a surrogate pair in UTF-16
            default: scalarUnits = 1
            }
            if units + scalarUnits > maxFrameUnits {
                starts.append(offset)
                units = 0
            }
            units += scalarUnits
        }
        return starts
    }
}
