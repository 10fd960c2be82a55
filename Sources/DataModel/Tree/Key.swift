/// One validated path segment: the name of a child (data-model.md §2.1).
///
/// Equality and hashing use the UTF-8 bytes, and `<` is Firebase key order (§7.1): keys that parse as a 32-bit
/// integer come first in numeric order (equal values: shorter string first), then all other keys by UTF-16 code
/// units. This is a total order consistent with `==`, so `Key` can be used in sorted structures and as a dictionary
/// key without ever merging canonically-equivalent strings the way `String` would.
///
/// Integer-like follows the JS SDK rule (`^-?(0*)\d{1,10}$` and within Int32), the most common client; Android and
/// iOS treat integer-like keys longer than 11 characters (leading zeros) as strings.
public struct Key: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The key text; native UTF-8 storage, so code-unit comparisons never copy.
    public let string: String

    /// Wraps a string already known to be a valid key (parsers validate the bytes while reading them).
    init(unchecked string: String) {
        var contiguous = string
        contiguous.makeContiguousUTF8()
        self.string = contiguous
    }

    /// Wraps `string` without validation, for keys read back from files this process wrote and checksummed
    /// (validating each of millions of keys again is measurable start-up time).
    ///
    /// - Precondition: `string` is a valid key (non-empty, no forbidden character); not verified.
    public init(trusted string: String) {
        self.init(unchecked: string)
    }

    /// Validates `string` as a key.
    ///
    /// - Throws: ``PathError/emptyKey``, ``PathError/invalidKey(_:)`` for a forbidden character, or
    ///   ``PathError/keyTooLong(_:byteCount:)`` when longer than `limits.maxKeyBytes` UTF-8 bytes.
    public init(_ string: String, limits: DataLimits = .default) throws(PathError) {
        let key = Key(unchecked: string)
        if let error = key.string.withUTF8Bytes({ Key.validationError($0, limits: limits) }) { throw error }
        self = key
    }

    /// Why `bytes` (UTF-8) is not a valid key, or `nil` when it is one.
    static func validationError(_ bytes: UnsafeBufferPointer<UInt8>, limits: DataLimits) -> PathError? {
        if bytes.isEmpty { return .emptyKey }
        for byte in bytes where Key.isForbidden(byte) {
            return .invalidKey(String(decoding: bytes, as: UTF8.self))
        }
        if bytes.count > limits.maxKeyBytes {
            return .keyTooLong(String(decoding: bytes, as: UTF8.self), byteCount: bytes.count)
        }
        return nil
    }

    /// Whether `byte` may not appear in a key: `.` `#` `$` `[` `]` `/`, U+0000–U+001F and U+007F.
    static func isForbidden(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x00...0x1F, 0x7F, UInt8(ascii: "."), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "["),
            UInt8(ascii: "]"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    /// The key's value when it is integer-like under the JS rule, else `nil`; `"-0"` is 0.
    public var integerValue: Int32? {
        string.withUTF8Bytes(Key.parseInteger).map { Int32(truncatingIfNeeded: $0) }
    }

    /// Parses the JS SDK's integer-key form: optional `-`, any leading zeros, at most 10 further digits, Int32 range.
    static func parseInteger(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard let first = bytes.first else { return nil }
        var index = 0
        let negative = first == UInt8(ascii: "-")
        if negative {
            index = 1
            guard bytes.count > 1 else { return nil }
        }
        // Fast rejection: push ids start with "-" followed by a letter, most other keys with a letter.
        guard bytes[index] &- UInt8(ascii: "0") < 10 else { return nil }
        while index < bytes.count - 1 && bytes[index] == UInt8(ascii: "0") { index += 1 }
        guard bytes.count - index <= 10 else { return nil }
        var value: Int64 = 0
        while index < bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int64(digit)
            index += 1
        }
        if negative { value = -value }
        guard value >= Int64(Int32.min) && value <= Int64(Int32.max) else { return nil }
        return value
    }

    /// Three-way Firebase key-order comparison (§7.1): negative when `a` sorts first.
    static func compare(_ a: Key, _ b: Key) -> Int {
        a.string.withUTF8Bytes { x in b.string.withUTF8Bytes { y in compareBytes(x, y) } }
    }

    /// Key order over two UTF-8 byte sequences.
    static func compareBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        if a.baseAddress == b.baseAddress && a.count == b.count { return 0 }  // the same storage
        return compare(a, integer(a), b, integer(b))
    }

    /// The integer value of a key's bytes (``parseInteger(_:)``), checking first whether the key can be one at all:
    /// only keys starting with a digit or `-` can, so most keys (names, push ids) skip the parse.
    @inline(__always)
    static func integer(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard let first = bytes.first, first &- UInt8(ascii: "0") < 10 || first == UInt8(ascii: "-") else { return nil }
        return parseInteger(bytes)
    }

    /// Key order of two keys' bytes whose integer values (``integer(_:)``) the caller has already parsed.
    @inline(__always)
    static func compare(
        _ a: UnsafeBufferPointer<UInt8>, _ aInteger: Int64?, _ b: UnsafeBufferPointer<UInt8>, _ bInteger: Int64?
    ) -> Int {
        switch (aInteger, bInteger) {
        case (let x?, let y?):
            if x != y { return x < y ? -1 : 1 }
            if a.count != b.count { return a.count < b.count ? -1 : 1 }
            return CodeUnitOrder.compare(a, b)
        case (.some, .none):
            return -1
        case (.none, .some):
            return 1
        case (.none, .none):
            return CodeUnitOrder.compare(a, b)
        }
    }

    /// Byte equality: `"é"` and `"e\u{301}"` are different keys.
    public static func == (lhs: Key, rhs: Key) -> Bool {
        CodeUnitOrder.equal(lhs.string, rhs.string)
    }

    /// Firebase key order (§7.1).
    public static func < (lhs: Key, rhs: Key) -> Bool {
        compare(lhs, rhs) < 0
    }

    /// Hashes the UTF-8 bytes.
    public func hash(into hasher: inout Hasher) {
        CodeUnitOrder.hash(string, into: &hasher)
    }

    /// The key text.
    public var description: String { string }

    /// Number of UTF-8 bytes.
    public var utf8Count: Int { string.utf8.count }
}
