/// The few Redis (RESP2) and NATS protocol messages a pub/sub load test needs: building SUBSCRIBE/PUBLISH and
/// CONNECT/SUB/PUB/PONG, and finding replies in a byte stream without copying. Both run on plain TCP.
enum PeerProtocols {
    /// Largest message accepted from a peer server.
    static let maximumBytes = 16 << 20

    /// What the next bytes of a stream hold.
    enum Scan: Equatable {
        /// A whole message ending before `end`.
        case message(PeerMessage, end: Int)
        /// The start of a message whose rest has not arrived.
        case incomplete
        /// Bytes that are not the protocol, with what was wrong.
        case malformed(String)
    }

    // MARK: - Redis (RESP2)

    /// `SUBSCRIBE topic` as a RESP array.
    static func appendRedisSubscribe(topic: [UInt8], to output: inout [UInt8]) {
        appendRESPArray([Array("SUBSCRIBE".utf8), topic], to: &output)
    }

    /// The head of `PUBLISH topic payload` up to the payload's bytes; the caller appends `payloadBytes` bytes and
    /// then `\r\n`.
    static func appendRedisPublishHead(topic: [UInt8], payloadBytes: Int, to output: inout [UInt8]) {
        output.append(contentsOf: "*3\r\n$7\r\nPUBLISH\r\n".utf8)
        appendBulkString(topic, to: &output)
        appendLength(UInt8(ascii: "$"), payloadBytes, to: &output)
    }

    private static func appendRESPArray(_ parts: [[UInt8]], to output: inout [UInt8]) {
        appendLength(UInt8(ascii: "*"), parts.count, to: &output)
        for part in parts { appendBulkString(part, to: &output) }
    }

    private static func appendBulkString(_ bytes: [UInt8], to output: inout [UInt8]) {
        appendLength(UInt8(ascii: "$"), bytes.count, to: &output)
        output.append(contentsOf: bytes)
        output.append(contentsOf: "\r\n".utf8)
    }

    private static func appendLength(_ marker: UInt8, _ length: Int, to output: inout [UInt8]) {
        output.append(marker)
        output.append(contentsOf: String(length).utf8)
        output.append(contentsOf: "\r\n".utf8)
    }

    /// The RESP reply starting at `start`: a pushed `message`, a `subscribe` confirmation, an integer (a
    /// PUBLISH's receiver count), an error, or something else the load test ignores.
    static func nextRedis(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Scan {
        guard start < bytes.count else { return .incomplete }
        switch bytes[start] {
        case UInt8(ascii: ":"), UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard let end = lineEnd(in: bytes, from: start + 1) else { return tooLong(bytes, start) }
            let line = UnsafeBufferPointer(rebasing: bytes[(start + 1)..<end])
            switch bytes[start] {
            case UInt8(ascii: ":"): return .message(.acknowledged, end: end + 2)
            case UInt8(ascii: "-"): return .message(.error(String(decoding: line, as: UTF8.self)), end: end + 2)
            default: return .message(.other, end: end + 2)
            }
        case UInt8(ascii: "*"):
            guard let headEnd = lineEnd(in: bytes, from: start + 1) else { return tooLong(bytes, start) }
            guard let count = decimal(bytes, (start + 1)..<headEnd), count >= 1, count <= 8 else {
                return .malformed("bad RESP array length")
            }
            var position = headEnd + 2
            var elements: [Range<Int>] = []
            for _ in 0..<count {
                guard position < bytes.count else { return .incomplete }
                switch bytes[position] {
                case UInt8(ascii: "$"):
                    guard let lengthEnd = lineEnd(in: bytes, from: position + 1) else {
                        return tooLong(bytes, position)
                    }
                    guard let length = decimal(bytes, (position + 1)..<lengthEnd), length <= maximumBytes else {
                        return .malformed("bad RESP bulk string length")
                    }
                    let bodyStart = lengthEnd + 2
                    guard bytes.count - bodyStart >= length + 2 else { return .incomplete }
                    elements.append(bodyStart..<(bodyStart + length))
                    position = bodyStart + length + 2
                case UInt8(ascii: ":"):
                    guard let integerEnd = lineEnd(in: bytes, from: position + 1) else {
                        return tooLong(bytes, position)
                    }
                    elements.append((position + 1)..<integerEnd)
                    position = integerEnd + 2
                default:
                    return .malformed("unexpected RESP element")
                }
            }
            let kind = String(decoding: UnsafeBufferPointer(rebasing: bytes[elements[0]]), as: UTF8.self)
            if kind == "message", elements.count == 3 { return .message(.payload(elements[2]), end: position) }
            if kind == "subscribe" { return .message(.subscribed, end: position) }
            return .message(.other, end: position)
        default:
            return .malformed("not a RESP reply")
        }
    }

    // MARK: - NATS

    /// The client's `CONNECT` (no echo confirmations, no `+OK`s).
    static let natsConnect = Array(#"CONNECT {"verbose":false,"pedantic":false,"echo":true,"name":"canopy-bench"}"#.utf8)
        + Array("\r\n".utf8)

    /// `SUB subject sid` for each subject (sids 1, 2, …) followed by a `PING`, whose `PONG` tells that the
    /// subscriptions are registered.
    static func appendNATSSubscribe(subjects: [[UInt8]], to output: inout [UInt8]) {
        for (position, subject) in subjects.enumerated() {
            output.append(contentsOf: "SUB ".utf8)
            output.append(contentsOf: subject)
            output.append(contentsOf: " \(position + 1)\r\n".utf8)
        }
        output.append(contentsOf: "PING\r\n".utf8)
    }

    /// The head of `PUB subject n`; the caller appends `payloadBytes` bytes and then `\r\n`.
    static func appendNATSPublishHead(subject: [UInt8], payloadBytes: Int, to output: inout [UInt8]) {
        output.append(contentsOf: "PUB ".utf8)
        output.append(contentsOf: subject)
        output.append(UInt8(ascii: " "))
        output.append(contentsOf: String(payloadBytes).utf8)
        output.append(contentsOf: "\r\n".utf8)
    }

    /// The NATS message starting at `start`: `MSG` with its payload, `PING`, `PONG`, `-ERR`, or another line.
    static func nextNATS(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Scan {
        guard let end = lineEnd(in: bytes, from: start) else { return tooLong(bytes, start) }
        let line = UnsafeBufferPointer(rebasing: bytes[start..<end])
        if starts(line, with: "MSG ") {
            // MSG <subject> <sid> [reply-to] <#bytes>
            guard let lastSpace = line.lastIndex(of: UInt8(ascii: " ")),
                let length = decimal(bytes, (start + lastSpace + 1)..<end), length <= maximumBytes
            else { return .malformed("bad MSG line") }
            let payloadStart = end + 2
            guard bytes.count - payloadStart >= length + 2 else { return .incomplete }
            return .message(.payload(payloadStart..<(payloadStart + length)), end: payloadStart + length + 2)
        }
        let next = end + 2
        if starts(line, with: "PING") { return .message(.ping, end: next) }
        if starts(line, with: "PONG") { return .message(.subscribed, end: next) }
        if starts(line, with: "-ERR") { return .message(.error(String(decoding: line, as: UTF8.self)), end: next) }
        if starts(line, with: "INFO") || starts(line, with: "+OK") { return .message(.other, end: next) }
        return .malformed("not a NATS message")
    }

    // MARK: - Scanning

    /// The index of the `\r` of the first `\r\n` from `start`, nil when none arrived yet.
    private static func lineEnd(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == 13, bytes[index + 1] == 10 { return index }
            index += 1
        }
        return nil
    }

    /// An unterminated line: incomplete while short, malformed past 4 KiB (no control line is that long).
    private static func tooLong(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int) -> Scan {
        bytes.count - start > 4096 ? .malformed("line longer than 4 KiB") : .incomplete
    }

    private static func decimal(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        guard !range.isEmpty, range.count <= 12 else { return nil }
        var value = 0
        for index in range {
            let byte = bytes[index]
            if byte == UInt8(ascii: "-"), index == range.lowerBound { return nil }
            guard byte >= 48, byte <= 57 else { return nil }
            value = value * 10 + Int(byte - 48)
        }
        return value
    }

    private static func starts(_ line: UnsafeBufferPointer<UInt8>, with prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard line.count >= count else { return false }
        let bytes = prefix.utf8Start
        for index in 0..<count where line[index] != bytes[index] { return false }
        return true
    }
}

/// One message a peer server sent that the load test acts on.
enum PeerMessage: Equatable {
    /// A published message reached a subscriber: the payload's range in the buffer.
    case payload(Range<Int>)
    /// The subscription is in place (Redis `subscribe`, NATS `PONG` after `SUB`).
    case subscribed
    /// A Redis `PUBLISH` was accepted (its integer reply).
    case acknowledged
    /// The server asks for a `PONG` (NATS).
    case ping
    /// The server refused something.
    case error(String)
    /// Anything else (NATS `INFO`, `+OK`).
    case other
}
