/// Allocation-free scanning of JSON text for the few members a load tester needs.
///
/// Not a validating parser: it finds a member of an object by skipping the members before it (strings with their
/// escapes, nested objects and arrays by depth), and gives up (`nil`) on anything it cannot follow. Input is hostile
/// in principle, so every index is checked against the buffer's end and nothing traps.
enum JSONScan {
    typealias Bytes = UnsafeBufferPointer<UInt8>

    /// The first index at or after `index` that is not JSON whitespace (RFC 8259 §2).
    @inline(__always)
    static func skipSpace(_ bytes: Bytes, _ index: Int) -> Int {
        var index = index
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return index
            }
        }
        return index
    }

    /// The index of the quote that closes the string opening at `quote`, or nil when it does not close.
    @inline(__always)
    static func stringEnd(_ bytes: Bytes, openingAt quote: Int) -> Int? {
        var index = quote + 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index
            default: index += 1
            }
        }
        return nil
    }

    /// The index just past the value starting at `start`, or nil when the value is cut off or malformed.
    static func valueEnd(_ bytes: Bytes, startingAt start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            return stringEnd(bytes, openingAt: start).map { $0 + 1 }
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var index = start
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    guard let end = stringEnd(bytes, openingAt: index) else { return nil }
                    index = end
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return index + 1 }
                default:
                    break
                }
                index += 1
            }
            return nil
        default:
            var index = start
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D:
                    return index
                default:
                    index += 1
                }
            }
            return index
        }
    }

    /// Where the value of member `key` of the object opening at `objectStart` starts, or nil when the object has
    /// no such member (or is not an object, or is malformed before the member).
    ///
    /// `key` is compared byte for byte with the raw key text, so it must not need escaping.
    static func member(_ key: StaticString, of bytes: Bytes, objectAt objectStart: Int) -> Int? {
        var cursor = MemberCursor(bytes, objectAt: objectStart)
        while let member = cursor.next() {
            if keyEquals(bytes, member.key, key) { return member.value }
        }
        return nil
    }

    /// Whether the raw key text at `key` equals `text`.
    @inline(__always)
    static func keyEquals(_ bytes: Bytes, _ key: Range<Int>, _ text: StaticString) -> Bool {
        equals(bytes, from: key.lowerBound, to: key.upperBound, text)
    }

    /// Whether the value at `start` is a string whose raw text equals `text`.
    static func isString(_ bytes: Bytes, at start: Int, _ text: StaticString) -> Bool {
        guard start < bytes.count, bytes[start] == UInt8(ascii: "\""),
            let end = stringEnd(bytes, openingAt: start)
        else { return false }
        return equals(bytes, from: start + 1, to: end, text)
    }

    /// Whether the value at `start` is the literal `null`.
    static func isNull(_ bytes: Bytes, at start: Int) -> Bool {
        guard start >= 0, bytes.count - start >= 4 else { return false }
        return equals(bytes, from: start, to: start + 4, "null")
            && (start + 4 == bytes.count || valueEnd(bytes, startingAt: start) == start + 4)
    }

    /// The range of the raw text of the string value at `start` (without quotes), or nil when it is not a string.
    static func stringContent(_ bytes: Bytes, at start: Int) -> Range<Int>? {
        guard start < bytes.count, bytes[start] == UInt8(ascii: "\""),
            let end = stringEnd(bytes, openingAt: start)
        else { return nil }
        return (start + 1)..<end
    }

    /// The integer value at `start` — an optional minus sign and at most 18 digits, not followed by a fraction or
    /// exponent — or nil for anything else.
    static func integer(_ bytes: Bytes, at start: Int) -> Int64? {
        var index = start
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        var value: Int64 = 0
        var digits = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            guard digits < 18 else { return nil }
            value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
            digits += 1
            index += 1
        }
        guard digits > 0 else { return nil }
        if index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
            default: break
            }
        }
        return negative ? -value : value
    }

    @inline(__always)
    private static func equals(_ bytes: Bytes, from start: Int, to end: Int, _ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard end - start == count else { return false }
        let expected = text.utf8Start
        for offset in 0..<count where bytes[start + offset] != expected[offset] {
            return false
        }
        return true
    }
}

/// Walks the members of one JSON object in order, skipping each value only when asked for the next member, so a
/// caller that descends into a value (or stops) never pays for skipping it.
struct MemberCursor {
    private let bytes: JSONScan.Bytes
    private var index: Int
    /// Where the value of the member last returned starts; it is skipped by the next call to `next()`.
    private var pendingValue: Int?
    private var finished = false

    /// A cursor over the object opening at `objectStart` (after optional whitespace).
    init(_ bytes: JSONScan.Bytes, objectAt objectStart: Int) {
        self.bytes = bytes
        let start = JSONScan.skipSpace(bytes, objectStart)
        if start < bytes.count, bytes[start] == UInt8(ascii: "{") {
            index = start + 1
        } else {
            index = start
            finished = true
        }
    }

    /// The next member's raw key text (without quotes) and where its value starts; nil at the end of the object
    /// or at anything malformed.
    mutating func next() -> (key: Range<Int>, value: Int)? {
        guard !finished else { return nil }
        if let value = pendingValue {
            pendingValue = nil
            guard let end = JSONScan.valueEnd(bytes, startingAt: value) else { return finish() }
            index = JSONScan.skipSpace(bytes, end)
            guard index < bytes.count, bytes[index] == UInt8(ascii: ",") else { return finish() }
            index += 1
        }
        index = JSONScan.skipSpace(bytes, index)
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\""),
            let keyEnd = JSONScan.stringEnd(bytes, openingAt: index)
        else { return finish() }
        let key = (index + 1)..<keyEnd
        index = JSONScan.skipSpace(bytes, keyEnd + 1)
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return finish() }
        index = JSONScan.skipSpace(bytes, index + 1)
        guard index < bytes.count else { return finish() }
        pendingValue = index
        return (key, index)
    }

    private mutating func finish() -> (key: Range<Int>, value: Int)? {
        finished = true
        return nil
    }
}
