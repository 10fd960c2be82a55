/// String operations of the rules language on UTF-8 bytes: Firebase compares strings by code units, never by
/// Unicode canonical equivalence as Swift's `String ==` and `hasPrefix` do.
enum StringBytes {
    /// Whether both strings have the same UTF-8 bytes.
    static func equal(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        if let result = a.utf8.withContiguousStorageIfAvailable({ x in
            b.utf8.withContiguousStorageIfAvailable { y in equalBytes(x, y) }
        }), let result {
            return result
        }
        return a.utf8.elementsEqual(b.utf8)
    }

    /// Whether two byte sequences of the same length are equal (a plain loop: `elementsEqual` goes through
    /// iterators).
    private static func equalBytes(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool {
        if x.baseAddress == y.baseAddress { return true }
        for index in 0..<x.count where x[index] != y[index] { return false }
        return true
    }

    /// Three-way comparison in UTF-16 code-unit order (JavaScript's `<` on strings), computed on UTF-8: the first
    /// differing bytes decide, except that a 4-byte sequence (a surrogate pair in UTF-16) sorts before the 3-byte
    /// sequences for U+E000–U+FFFF.
    static func compare(_ a: String, _ b: String) -> Int {
        var left = a.utf8.makeIterator()
        var right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?):
                if x == y { continue }
                if x >= 0xF0 && (y == 0xEE || y == 0xEF) { return -1 }
                if y >= 0xF0 && (x == 0xEE || x == 0xEF) { return 1 }
                return x < y ? -1 : 1
            }
        }
    }

    /// Whether `needle`'s bytes occur in `haystack` (the empty string occurs everywhere).
    static func contains(_ haystack: String, _ needle: String) -> Bool {
        firstRange(of: Array(needle.utf8), in: Array(haystack.utf8), from: 0) != nil
    }

    /// Whether `text` starts with the bytes of `prefix`.
    static func hasPrefix(_ text: String, _ prefix: String) -> Bool {
        text.utf8.count >= prefix.utf8.count && text.utf8.starts(with: prefix.utf8)
    }

    /// Whether `text` ends with the bytes of `suffix`.
    static func hasSuffix(_ text: String, _ suffix: String) -> Bool {
        text.utf8.count >= suffix.utf8.count && text.utf8.reversed().starts(with: suffix.utf8.reversed())
    }

    /// `text` with **every** occurrence of `target` replaced by `replacement` (rules' `replace`, §6 — not the
    /// JavaScript first-only behaviour). An empty `target` inserts `replacement` before every character and at the
    /// end, as Java's `String.replace` does.
    static func replacingAll(_ text: String, _ target: String, with replacement: String) -> String {
        let bytes = Array(text.utf8)
        let pattern = Array(target.utf8)
        if pattern.isEmpty {
            var result = ""
            for scalar in text.unicodeScalars {
                result += replacement
                result.unicodeScalars.append(scalar)
            }
            return result + replacement
        }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var start = 0
        while let range = firstRange(of: pattern, in: bytes, from: start) {
            output.append(contentsOf: bytes[start..<range.lowerBound])
            output.append(contentsOf: replacement.utf8)
            start = range.upperBound
        }
        output.append(contentsOf: bytes[start...])
        return String(decoding: output, as: UTF8.self)
    }

    /// The first occurrence of `pattern` in `bytes` at or after `start`. Both are valid UTF-8, so a byte match is a
    /// character match.
    private static func firstRange(of pattern: [UInt8], in bytes: [UInt8], from start: Int) -> Range<Int>? {
        guard !pattern.isEmpty else { return start..<start }
        guard bytes.count - start >= pattern.count else { return nil }
        let first = pattern[0]
        var index = start
        let last = bytes.count - pattern.count
        while index <= last {
            if bytes[index] == first {
                var matched = true
                for offset in 1..<pattern.count where bytes[index + offset] != pattern[offset] {
                    matched = false
                    break
                }
                if matched { return index..<(index + pattern.count) }
            }
            index += 1
        }
        return nil
    }
}
