/// Strict base64url decoding for JWS segments (RFC 7515 §2, RFC 4648 §5).
///
/// JWS segments carry no padding, so `=` is refused, as is any byte outside the URL-safe alphabet, a length that
/// leaves a single dangling character, and non-zero bits in the last character beyond the data (so every byte string
/// has exactly one accepted encoding).
enum Base64URL {
    /// Decodes `encoded`, or returns `nil` when it is not canonical unpadded base64url.
    static func decode(_ encoded: ArraySlice<UInt8>) -> [UInt8]? {
        let remainder = encoded.count % 4
        guard remainder != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(encoded.count / 4 * 3 + 2)
        var accumulator: UInt32 = 0
        var bitCount = 0
        for byte in encoded {
            guard let sextet = value(of: byte) else { return nil }
            accumulator = (accumulator << 6) | UInt32(sextet)
            bitCount += 6
            if bitCount >= 8 {
                bitCount -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bitCount)))
                accumulator &= (1 << UInt32(bitCount)) - 1
            }
        }
        // Leftover bits (2 or 4) must be zero for a canonical encoding.
        guard accumulator == 0 else { return nil }
        return output
    }

    /// The 6-bit value of one base64url character.
    private static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): return 62
        case UInt8(ascii: "_"): return 63
        default: return nil
        }
    }
}
