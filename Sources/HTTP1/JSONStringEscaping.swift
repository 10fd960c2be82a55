/// Writes a Swift string as a JSON string literal (RFC 8259 §7), for the small bodies this module builds.
///
/// The full JSON codec lives in DataModel, which HTTP1 must not depend on; error bodies need only this.
enum JSONStringEscaping {
    /// Appends `string` to `bytes` as a quoted JSON string.
    ///
    /// `"` and `\` are escaped, control characters become `\n`-style escapes or `\u00XX`, and everything else,
    /// including non-ASCII text, is copied as UTF-8. U+2028 and U+2029 are escaped too, so the output is also
    /// safe inside JavaScript source.
    static func appendQuoted(_ string: String, to bytes: inout [UInt8]) {
        bytes.append(0x22)
        var utf8 = string.utf8.makeIterator()
        while let byte = utf8.next() {
            switch byte {
            case 0x22: bytes.append(contentsOf: [0x5C, 0x22])  // \"
            case 0x5C: bytes.append(contentsOf: [0x5C, 0x5C])  // \\
            case 0x08: bytes.append(contentsOf: [0x5C, 0x62])  // \b
            case 0x0C: bytes.append(contentsOf: [0x5C, 0x66])  // \f
            case 0x0A: bytes.append(contentsOf: [0x5C, 0x6E])  // \n
            case 0x0D: bytes.append(contentsOf: [0x5C, 0x72])  // \r
            case 0x09: bytes.append(contentsOf: [0x5C, 0x74])  // \t
            case 0x00..<0x20: appendUnicodeEscape(UInt16(byte), to: &bytes)
            case 0xE2:
                // U+2028 and U+2029 are E2 80 A8 and E2 80 A9 in UTF-8.
                guard let second = utf8.next() else {
                    bytes.append(byte)
                    break
                }
                guard let third = utf8.next() else {
                    bytes.append(contentsOf: [byte, second])
                    break
                }
                if second == 0x80 && (third == 0xA8 || third == 0xA9) {
                    appendUnicodeEscape(third == 0xA8 ? 0x2028 : 0x2029, to: &bytes)
                } else {
                    bytes.append(contentsOf: [byte, second, third])
                }
            default: bytes.append(byte)
            }
        }
        bytes.append(0x22)
    }

    /// Appends `\uXXXX` with lowercase hexadecimal digits.
    private static func appendUnicodeEscape(_ value: UInt16, to bytes: inout [UInt8]) {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        bytes.append(contentsOf: [0x5C, 0x75])
        for shift in stride(from: 12, through: 0, by: -4) {
            bytes.append(digits[Int((value >> UInt16(shift)) & 0xF)])
        }
    }
}
