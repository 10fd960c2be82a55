import Glibc

/// What a complete server message of the Firebase wire protocol is, as far as the load tester cares
/// (wire-protocol.md §3, §5.1, §11); positions index the scanned bytes, so classifying allocates nothing.
enum FirebaseMessage: Equatable {
    /// The server hello, `{"t":"c","d":{"t":"h",...}}` (§3.2).
    case hello
    /// The server ends the connection for good (`{"t":"c","d":{"t":"s","d":reason}}`): `reason` is the raw text.
    case shutdown(reason: Range<Int>)
    /// Any other control message (pong, reset, error).
    case control
    /// A response to request `request`; `ok` when its status is `"ok"`; `status` is the raw status text.
    case response(request: Int64, ok: Bool, status: Range<Int>)
    /// A data (`d`) or merge (`m`) push: `merge` tells which; `path` is the raw text of `b.p`, `data` where the
    /// value of `b.d` starts.
    case push(merge: Bool, path: Range<Int>, data: Int)
    /// A push with another action (listen revoked, auth revoked, security debug, ...).
    case otherPush
    /// Not a message the scanner can follow.
    case malformed

    /// Classifies one complete message (a whole WebSocket text message, or the reassembled pieces of a split one).
    static func classify(_ bytes: JSONScan.Bytes) -> FirebaseMessage {
        guard let layer = JSONScan.member("t", of: bytes, objectAt: 0),
            let inner = JSONScan.member("d", of: bytes, objectAt: 0)
        else { return .malformed }
        if JSONScan.isString(bytes, at: layer, "c") {
            guard let type = JSONScan.member("t", of: bytes, objectAt: inner) else { return .malformed }
            if JSONScan.isString(bytes, at: type, "s"), let payload = JSONScan.member("d", of: bytes, objectAt: inner),
               let reason = JSONScan.stringContent(bytes, at: payload)
            {
                return .shutdown(reason: reason)
            }
            return JSONScan.isString(bytes, at: type, "h") ? .hello : .control
        }
        guard JSONScan.isString(bytes, at: layer, "d") else { return .malformed }
        if let action = JSONScan.member("a", of: bytes, objectAt: inner) {
            let merge = JSONScan.isString(bytes, at: action, "m")
            guard merge || JSONScan.isString(bytes, at: action, "d") else { return .otherPush }
            guard let body = JSONScan.member("b", of: bytes, objectAt: inner),
                let pathValue = JSONScan.member("p", of: bytes, objectAt: body),
                let path = JSONScan.stringContent(bytes, at: pathValue),
                let data = JSONScan.member("d", of: bytes, objectAt: body)
            else { return .malformed }
            return .push(merge: merge, path: path, data: data)
        }
        guard let numberValue = JSONScan.member("r", of: bytes, objectAt: inner),
            let number = JSONScan.integer(bytes, at: numberValue),
            let body = JSONScan.member("b", of: bytes, objectAt: inner),
            let statusValue = JSONScan.member("s", of: bytes, objectAt: body),
            let status = JSONScan.stringContent(bytes, at: statusValue)
        else { return .malformed }
        return .response(request: number, ok: JSONScan.isString(bytes, at: statusValue, "ok"), status: status)
    }

    /// How a push's raw path `bytes[range]` relates to a listened `path`, ignoring leading and trailing slashes
    /// (JS sends `/a/b`, Android `a/b`): the same location, a location below it, or neither (nil).
    static func relation(of bytes: JSONScan.Bytes, _ range: Range<Int>, to path: [UInt8]) -> PathRelation? {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, bytes[lower] == UInt8(ascii: "/") { lower += 1 }
        while upper > lower, bytes[upper - 1] == UInt8(ascii: "/") { upper -= 1 }
        var start = 0
        var end = path.count
        while start < end, path[start] == UInt8(ascii: "/") { start += 1 }
        while end > start, path[end - 1] == UInt8(ascii: "/") { end -= 1 }
        let length = end - start
        guard upper - lower >= length else { return nil }
        for offset in 0..<length where bytes[lower + offset] != path[start + offset] {
            return nil
        }
        if upper - lower == length { return .same }
        guard length == 0 || bytes[lower + length] == UInt8(ascii: "/") else { return nil }
        return .below
    }

    /// Where a push lands relative to a listened path.
    enum PathRelation: Equatable {
        case same, below
    }
}

/// The fast path for the one message a subscriber gets millions of: an update exactly as the server encodes it,
/// `PREFIX{"pad":"xx…","seq":S,"ts":T,"w":W}` followed by `closers` closing braces — for Canopy's data push PREFIX
/// is `{"t":"d","d":{"a":"d","b":{"p":"/bench/room<i>","d":` and three braces close it; MQTT and raw WebSocket
/// messages are the bare object. Anything else (other member order, spacing, escapes, a tag) returns nil and goes
/// through the general scanners, which follow any shape.
enum BenchPush {
    /// The bytes a Firebase data push at `path` starts with.
    static func prefix(path: [UInt8]) -> [UInt8] {
        Array(#"{"t":"d","d":{"a":"d","b":{"p":""#.utf8) + path + Array(#"","d":"#.utf8)
    }

    /// The update in `bytes` when it has exactly the expected shape after `prefix`.
    @inline(__always)
    static func value(_ bytes: JSONScan.Bytes, prefix: UnsafeBufferPointer<UInt8>, closers: Int) -> BenchValue? {
        guard bytes.count > prefix.count + 30, let base = bytes.baseAddress else { return nil }
        if let expected = prefix.baseAddress, memcmp(base, expected, prefix.count) != 0 { return nil }
        var index = prefix.count
        guard literal(bytes, &index, #"{"pad":""#) else { return nil }
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
            index += 1
        }
        guard literal(bytes, &index, #"","seq":"#), let sequence = digits(bytes, &index),
            literal(bytes, &index, #","ts":"#), let sentAt = digits(bytes, &index),
            literal(bytes, &index, #","w":"#), let writer = digits(bytes, &index),
            bytes.count - index == closers + 1
        else { return nil }
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "}") else { return nil }
            index += 1
        }
        return BenchValue(sequence: sequence, sentAt: sentAt, writer: writer)
    }

    @inline(__always)
    private static func literal(_ bytes: JSONScan.Bytes, _ index: inout Int, _ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard bytes.count - index >= count, let base = bytes.baseAddress,
            memcmp(base + index, text.utf8Start, count) == 0
        else { return false }
        index += count
        return true
    }

    /// 1 to 18 decimal digits (no sign, fraction or exponent: the next byte must be `,` or `}`).
    @inline(__always)
    private static func digits(_ bytes: JSONScan.Bytes, _ index: inout Int) -> Int64? {
        var value: Int64 = 0
        let start = index
        while index < bytes.count, index - start < 18, bytes[index] &- UInt8(ascii: "0") < 10 {
            value = value * 10 + Int64(bytes[index] &- UInt8(ascii: "0"))
            index += 1
        }
        guard index > start, index < bytes.count,
            bytes[index] == UInt8(ascii: ",") || bytes[index] == UInt8(ascii: "}")
        else { return nil }
        return value
    }
}

/// The fields of one benchmark update: `{"pad":"…","seq":S,"ts":T,"w":W}`.
struct BenchValue: Equatable, Codable, Sendable {
    /// The writer's sequence number for this room, from 1.
    var sequence: Int64
    /// When the writer built the put, in nanoseconds since the run's clock origin (`CLOCK_MONOTONIC`).
    var sentAt: Int64
    /// The writer's index.
    var writer: Int64

    /// Reads the benchmark fields from the object starting at `start`; nil when it is not one (e.g. `null`).
    init?(_ bytes: JSONScan.Bytes, objectAt start: Int) {
        var sequence: Int64?
        var sentAt: Int64?
        var writer: Int64?
        var cursor = MemberCursor(bytes, objectAt: start)
        while let member = cursor.next() {
            if JSONScan.keyEquals(bytes, member.key, "seq") {
                sequence = JSONScan.integer(bytes, at: member.value)
            } else if JSONScan.keyEquals(bytes, member.key, "ts") {
                sentAt = JSONScan.integer(bytes, at: member.value)
            } else if JSONScan.keyEquals(bytes, member.key, "w") {
                writer = JSONScan.integer(bytes, at: member.value)
            }
        }
        guard let sequence, let sentAt, let writer else { return nil }
        self.sequence = sequence
        self.sentAt = sentAt
        self.writer = writer
    }

    init(sequence: Int64, sentAt: Int64, writer: Int64) {
        self.sequence = sequence
        self.sentAt = sentAt
        self.writer = writer
    }
}
