/// Comparisons of strings by code units, never by Swift's Unicode canonical equivalence (data-model.md §7.1).
///
/// Firebase treats `"é"` (U+00E9) and `"e\u{301}"` as two different keys, and orders strings by their UTF-16 code
/// units (JS `<`, Java `compareTo`). Swift `String ==` and `<` would merge the first pair and order by scalars, so all
/// key and string-value comparisons in this module go through these helpers.
///
/// UTF-16 order is computed directly on UTF-8 bytes: after the common prefix both strings stand at the same position
/// inside a character, so the first differing bytes are either two continuation bytes of equally long sequences
/// (byte order = UTF-16 order) or two lead bytes. Lead bytes only disagree with UTF-16 order for a 4-byte sequence
/// (U+10000 and up, encoded in UTF-16 as surrogates 0xD800–0xDFFF) against a 3-byte sequence for U+E000–U+FFFF
/// (lead byte 0xEE or 0xEF): the supplementary character sorts first in UTF-16.
enum CodeUnitOrder {
    /// Three-way comparison of two UTF-8 byte sequences in UTF-16 code-unit order: negative, zero or positive.
    static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        // The same storage (a key compared with its own copy, common in index and window maintenance).
        if a.baseAddress == b.baseAddress && a.count == b.count { return 0 }
        let common = min(a.count, b.count)
        var index = commonWordPrefix(a, b, common)
        while index < common {
            let x = a[index]
            let y = b[index]
            if x != y {
                if x >= 0xF0 && (y == 0xEE || y == 0xEF) { return -1 }
                if y >= 0xF0 && (x == 0xEE || x == 0xEF) { return 1 }
                return x < y ? -1 : 1
            }
            index += 1
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// How many of the first `count` bytes of `a` and `b` are equal, counted in whole 8-byte words (keys that
    /// share a long prefix, such as push ids written around the same time, skip it a word at a time).
    @inline(__always)
    private static func commonWordPrefix(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>, _ count: Int) -> Int {
        guard count >= 8, let x = a.baseAddress, let y = b.baseAddress else { return 0 }
        var index = 0
        while index + 8 <= count
            && UnsafeRawPointer(x + index).loadUnaligned(as: UInt64.self)
                == UnsafeRawPointer(y + index).loadUnaligned(as: UInt64.self)
        {
            index += 8
        }
        return index
    }

    /// Whether two UTF-8 byte sequences are equal.
    @inline(__always)
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        if a.baseAddress == b.baseAddress { return true }
        var index = commonWordPrefix(a, b, a.count)
        while index < a.count {
            if a[index] != b[index] { return false }
            index += 1
        }
        return true
    }

    /// Three-way comparison of two strings in UTF-16 code-unit order.
    static func compare(_ a: String, _ b: String) -> Int {
        a.withUTF8Bytes { x in b.withUTF8Bytes { y in compare(x, y) } }
    }

    /// Whether two strings consist of the same UTF-8 bytes.
    static func equal(_ a: String, _ b: String) -> Bool {
        // Different lengths (most unequal keys) are told apart without reaching for the bytes.
        guard a.utf8.count == b.utf8.count else { return false }
        return a.withUTF8Bytes { x in b.withUTF8Bytes { y in equal(x, y) } }
    }

    /// Hashes the UTF-8 bytes of `string`, so that equal code-unit sequences (and only those) hash alike.
    static func hash(_ string: String, into hasher: inout Hasher) {
        string.withUTF8Bytes { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(0xFF as UInt8)  // terminator: no UTF-8 string contains 0xFF
    }
}

extension String {
    /// Calls `body` with the string's UTF-8 bytes; native strings (all strings this module builds) never copy.
    func withUTF8Bytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = self
        return try copy.withUTF8(body)
    }
}
