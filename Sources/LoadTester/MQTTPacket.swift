/// The few MQTT 3.1.1 packets a QoS 0 load test needs (OASIS MQTT 3.1.1 §2–§3): building CONNECT, SUBSCRIBE and
/// PUBLISH, and finding packets in a byte stream without copying.
enum MQTTPacket {
    /// Control packet types (§2.2.1).
    static let connect: UInt8 = 1
    static let connectAcknowledgement: UInt8 = 2
    static let publish: UInt8 = 3
    static let subscribeAcknowledgement: UInt8 = 9

    /// One packet found in a buffer: its type, the fixed header's flags, where its variable part lies, and the index
    /// just past it.
    struct Found: Equatable {
        var type: UInt8
        var flags: UInt8
        var body: Range<Int>
        var end: Int
    }

    /// What the next bytes of a stream hold.
    enum Scan: Equatable {
        /// A whole packet.
        case packet(Found)
        /// The start of a packet whose rest has not arrived.
        case incomplete
        /// A remaining length longer than four bytes (§2.2.3) or over `maximumBytes`.
        case malformed
    }

    /// Largest packet accepted.
    static let maximumBytes = 16 << 20

    /// The packet starting at `start` in `bytes`.
    static func next(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Scan {
        guard bytes.count - start >= 2 else { return .incomplete }
        var length = 0
        var shift = 0
        var index = start + 1
        while true {
            guard index < bytes.count else { return .incomplete }
            let byte = bytes[index]
            length |= Int(byte & 0x7F) << shift
            index += 1
            if byte & 0x80 == 0 { break }
            shift += 7
            guard shift < 28 else { return .malformed }
        }
        guard length <= maximumBytes else { return .malformed }
        guard bytes.count - index >= length else { return .incomplete }
        let first = bytes[start]
        let body = index..<(index + length)
        return .packet(Found(type: first >> 4, flags: first & 0x0F, body: body, end: body.upperBound))
    }

    /// The application message of a PUBLISH (§3.3): after the topic and, for QoS 1 and 2, the packet identifier.
    static func publishPayload(_ bytes: UnsafeBufferPointer<UInt8>, _ packet: Found) -> Range<Int>? {
        guard packet.body.count >= 2 else { return nil }
        let topicLength = Int(bytes[packet.body.lowerBound]) << 8 | Int(bytes[packet.body.lowerBound + 1])
        var start = packet.body.lowerBound + 2 + topicLength
        if (packet.flags >> 1) & 0x3 != 0 { start += 2 }
        guard start <= packet.body.upperBound else { return nil }
        return start..<packet.body.upperBound
    }

    /// Appends a CONNECT with a clean session, no keep-alive (the server then never expects pings) and `clientID`
    /// (§3.1).
    static func appendConnect(clientID: [UInt8], to bytes: inout [UInt8]) {
        bytes.append(connect << 4)
        appendRemainingLength(10 + 2 + clientID.count, to: &bytes)
        bytes.append(contentsOf: [0, 4] + Array("MQTT".utf8) + [4, 0x02, 0, 0])
        appendString(clientID, to: &bytes)
    }

    /// Appends a SUBSCRIBE of `topic` at QoS 0 with packet identifier 1 (§3.8; its fixed header flags are 0010).
    static func appendSubscribe(topic: [UInt8], to bytes: inout [UInt8]) {
        bytes.append(0x82)
        appendRemainingLength(2 + 2 + topic.count + 1, to: &bytes)
        bytes.append(contentsOf: [0, 1])
        appendString(topic, to: &bytes)
        bytes.append(0)
    }

    /// Appends the fixed and variable header of a QoS 0 PUBLISH of `payloadBytes` bytes to `topic` (§3.3); the
    /// payload follows.
    static func appendPublishHeader(topic: [UInt8], payloadBytes: Int, to bytes: inout [UInt8]) {
        bytes.append(publish << 4)
        appendRemainingLength(2 + topic.count + payloadBytes, to: &bytes)
        appendString(topic, to: &bytes)
    }

    /// The variable-length "remaining length" (§2.2.3): seven bits per byte, least significant first.
    static func appendRemainingLength(_ value: Int, to bytes: inout [UInt8]) {
        var rest = value
        repeat {
            var byte = UInt8(rest & 0x7F)
            rest >>= 7
            if rest > 0 { byte |= 0x80 }
            bytes.append(byte)
        } while rest > 0
    }

    /// A UTF-8 string with its two-byte big-endian length (§1.5.3).
    private static func appendString(_ text: [UInt8], to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: text.count >> 8))
        bytes.append(UInt8(truncatingIfNeeded: text.count))
        bytes.append(contentsOf: text)
    }
}
