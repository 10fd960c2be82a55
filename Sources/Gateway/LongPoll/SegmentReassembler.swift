import Primitives

/// Puts a long-poll session's segments back together into messages, strictly by segment number
/// (long-polling.md §3): segments ahead of the next expected one wait, segments already taken are ignored, and a
/// message is decoded once all its segments are there. Owned by the session's loop.
struct SegmentReassembler {
    /// Most segments that may wait for a gap to fill.
    static let maxWaitingSegments = 64
    /// Most base64 characters of one message (a 16 MiB message, base64-encoded, with padding).
    let maxMessageCharacters: Int

    /// The number of the next segment to take.
    private(set) var nextSegment = 0
    private var waiting: [Int: LongPollSegment] = [:]
    /// The base64 text of the message being put together, its first segment and its segment count.
    private var text: [UInt8] = []
    private var messageStart = 0
    private var messageCount = 0

    init(maxMessageBytes: Int) {
        maxMessageCharacters = (maxMessageBytes + 2) / 3 * 4
    }

    /// Takes a request's segments; returns the messages they complete, in order.
    mutating func receive(_ segments: [LongPollSegment]) throws(LongPollRequestError) -> [[UInt8]] {
        var messages: [[UInt8]] = []
        for segment in segments {
            if segment.number < nextSegment { continue }  // taken before: a repeated request
            if segment.number > nextSegment {
                if let held = waiting[segment.number] {
                    guard held == segment else {
                        throw .invalid("segment \(segment.number) arrived twice with different contents")
                    }
                    continue
                }
                guard waiting.count < Self.maxWaitingSegments else {
                    throw .invalid("more than \(Self.maxWaitingSegments) segments wait for segment \(nextSegment)")
                }
                waiting[segment.number] = segment
                continue
            }
            try take(segment, into: &messages)
            while let next = waiting.removeValue(forKey: nextSegment) {
                try take(next, into: &messages)
            }
        }
        return messages
    }

    /// Takes the next segment in order.
    private mutating func take(_ segment: LongPollSegment, into messages: inout [[UInt8]]) throws(LongPollRequestError) {
        if text.isEmpty && messageCount == 0 {
            messageStart = segment.number
            messageCount = segment.count
        } else if segment.count != messageCount {
            throw .invalid("segment \(segment.number) says its message has \(segment.count) segments, not \(messageCount)")
        }
        guard text.count + segment.data.count <= maxMessageCharacters else {
            throw .invalid("a message exceeds the limit of \((maxMessageCharacters / 4) * 3) bytes")
        }
        text += segment.data
        nextSegment += 1
        guard nextSegment - messageStart == messageCount else { return }
        defer {
            text.removeAll()
            messageCount = 0
        }
        guard let message = Base64.decodeLenient(text) else {
            throw .invalid("message of segments \(messageStart)…\(segment.number) is not base64")
        }
        messages.append(message)
    }
}
