/// Percent-decoding of URL parts (RFC 3986 §2.1), for query strings and path segments.
public enum PercentDecoding {
    /// `bytes` with `%XX` escapes decoded. A `%` not followed by two hex digits is kept as it is, `+` stays a plus
    /// (RFC 3986, not form encoding), and bytes that are not valid UTF-8 after decoding become U+FFFD.
    public static func decode(_ bytes: some Collection<UInt8>) -> String {
        guard bytes.contains(UInt8(ascii: "%")) else { return String(decoding: bytes, as: UTF8.self) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            let next = bytes.index(after: index)
            if byte == UInt8(ascii: "%"), next != bytes.endIndex, bytes.index(after: next) != bytes.endIndex,
               let high = hexValue(bytes[next]), let low = hexValue(bytes[bytes.index(after: next)])
            {
                decoded.append(high << 4 | low)
                index = bytes.index(next, offsetBy: 2)
            } else {
                decoded.append(byte)
                index = next
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
