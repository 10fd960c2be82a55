#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

    /// Whether `bytes` hold `expected` at `offset` (`false` when it does not fit there): how the wire protocol's
    /// frequent messages are recognized by their fixed bytes.
    public static func matches(_ bytes: UnsafeRawBufferPointer, at offset: Int, _ expected: [UInt8]) -> Bool {
        guard offset >= 0, offset <= bytes.count - expected.count else { return false }
        return expected.withUnsafeBytes { wanted in
            guard let base = bytes.baseAddress, let wantedBase = wanted.baseAddress else { return wanted.isEmpty }
            return memcmp(base + offset, wantedBase, wanted.count) == 0
        }
    }

    /// The integer JSON writes at `offset` of `bytes` (decimal digits, no sign, no leading zero) and the offset past
    /// it; `nil` when there is no digit there, a leading zero, or more than `maxDigits` digits (at most 17). At most
    /// one digit past the limit is read, so a run of digits of any length cannot overflow.
    public static func jsonInteger(in bytes: UnsafeRawBufferPointer, at offset: Int, maxDigits: Int)
        -> (value: Int, end: Int)?
    {
        let limit = min(maxDigits, 17)
        guard offset >= 0 else { return nil }
        var index = offset
        var value = 0
        while index < bytes.count, index - offset <= limit, bytes[index] &- UInt8(ascii: "0") < 10 {
            value = value * 10 + Int(bytes[index] &- UInt8(ascii: "0"))
            index += 1
        }
        let digits = index - offset
        guard digits >= 1, digits <= limit, bytes[offset] != UInt8(ascii: "0") || digits == 1 else { return nil }
        return (value, index)
    }
}
