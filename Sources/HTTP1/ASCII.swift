/// Byte constants and character classes from RFC 9110 §5.6 and RFC 9112 that the parser and encoders share.
enum ASCII {
    static let tab: UInt8 = 0x09
    static let lf: UInt8 = 0x0A
    static let cr: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let comma: UInt8 = 0x2C
    static let slash: UInt8 = 0x2F
    static let colon: UInt8 = 0x3A
    static let semicolon: UInt8 = 0x3B
    static let questionMark: UInt8 = 0x3F
    static let crlf: [UInt8] = [cr, lf]

    /// Whether `byte` is a `tchar`, the characters of a token such as a method or field name (RFC 9110 §5.6.2).
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A:  // DIGIT, ALPHA
            true
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E:  // !#$%&'*+-.^_`|~
            true
        default:
            false
        }
    }

    /// Whether `byte` is optional whitespace, SP or HTAB (RFC 9110 §5.6.3).
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == space || byte == tab
    }

    /// Whether `byte` is a visible US-ASCII character (VCHAR, RFC 5234 appendix B.1).
    static func isVisible(_ byte: UInt8) -> Bool {
        byte >= 0x21 && byte <= 0x7E
    }

    /// Whether `byte` may appear inside a field value: VCHAR, obs-text, SP or HTAB (RFC 9110 §5.5).
    ///
    /// Every other control character, including NUL, CR, LF and DEL, is rejected rather than replaced.
    static func isFieldValueCharacter(_ byte: UInt8) -> Bool {
        (byte >= 0x21 && byte != 0x7F) || isWhitespace(byte)
    }

    /// The value of a hexadecimal digit (RFC 5234 HEXDIG, either case), or nil.
    static func hexDigitValue(_ byte: UInt8) -> Int? {
        switch byte {
        case 0x30...0x39: Int(byte - 0x30)
        case 0x41...0x46: Int(byte - 0x41 + 10)
        case 0x61...0x66: Int(byte - 0x61 + 10)
        default: nil
        }
    }

    /// Folds `A`–`Z` to `a`–`z` and leaves every other byte alone.
    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }

    /// Whether two byte sequences are equal when ASCII letters are compared without case.
    static func equalIgnoringCase(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        // Header names are native strings: compared over their contiguous bytes, with no iterator per byte.
        if let equal = lhs.withContiguousStorageIfAvailable({ left in
            rhs.withContiguousStorageIfAvailable { right in
                for index in 0..<left.count where lowercased(left[index]) != lowercased(right[index]) {
                    return false
                }
                return true
            }
        }), let equal {
            return equal
        }
        return zip(lhs, rhs).allSatisfy { lowercased($0) == lowercased($1) }
    }

    /// `bytes` without leading and trailing SP and HTAB.
    static func trimmingWhitespace<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes) -> Bytes.SubSequence {
        var slice = bytes[...]
        while let first = slice.first, isWhitespace(first) { slice.removeFirst() }
        while let last = slice.last, isWhitespace(last) { slice.removeLast() }
        return slice
    }
}
