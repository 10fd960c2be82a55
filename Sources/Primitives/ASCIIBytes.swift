/// Byte-level text helpers shared by the parsers, writers and the load client: no `String` round trips, no
/// allocation beyond the output array's growth.
public enum ASCIIBytes {
    /// Whether `byte` is a letter, a digit, `-` or `_`: safe unescaped in a URL, a Firebase key, a JSON string and a
    /// file name.
    @inlinable
    public static func isWordOrDash(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }

    /// Appends `value` in decimal to `bytes`.
    @inlinable
    public static func appendDecimal(_ value: UInt64, to bytes: inout [UInt8]) {
        var buffer: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes ≥ the 20 digits of UInt64.max
        withUnsafeMutableBytes(of: &buffer) { raw in
            var position = raw.count
            var rest = value
            repeat {
                position -= 1
                raw[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            bytes.append(contentsOf: raw[position...])
        }
    }
}
