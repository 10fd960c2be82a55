/// Standard base64 (RFC 4648 §4, alphabet `A–Z a–z 0–9 + /` with `=` padding).
///
/// Used for `Sec-WebSocket-Key` / `Sec-WebSocket-Accept` (RFC 6455 §4.2.1, §4.2.2). Decoding is strict: the input
/// must be canonical (length a multiple of 4, padding only at the end, unused trailing bits zero, no whitespace), so
/// a given byte string has exactly one accepted spelling (RFC 4648 §3.5 permits rejecting non-canonical input).
public enum Base64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let padding = UInt8(ascii: "=")
    /// Maps an ASCII byte to its 6-bit value, or 0xFF when the byte is not in the alphabet.
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, symbol) in alphabet.enumerated() {
            table[Int(symbol)] = UInt8(value)
        }
        return table
    }()

    /// Encodes `bytes` with padding.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= input.count {
            let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            appendSymbols(of: group, count: 4, to: &output)
            index += 3
        }
        switch input.count - index {
        case 1:
            appendSymbols(of: UInt32(input[index]) << 16, count: 2, to: &output)
            output.append(padding)
            output.append(padding)
        case 2:
            appendSymbols(of: UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8, count: 3, to: &output)
            output.append(padding)
        default:
            break
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes canonical padded base64, or returns `nil` for anything else (see the type's discussion).
    public static func decode(_ string: String) -> [UInt8]? {
        let input = Array(string.utf8)
        guard input.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count / 4 * 3)
        var index = 0
        while index < input.count {
            let isLastGroup = index + 4 == input.count
            let paddingCount = isLastGroup ? trailingPaddingCount(input) : 0
            guard paddingCount <= 2 else { return nil }
            var group: UInt32 = 0
            for offset in 0..<4 {
                let symbol = input[index + offset]
                if offset >= 4 - paddingCount {
                    group <<= 6
                    continue
                }
                let value = decodeTable[Int(symbol)]
                guard value != 0xFF else { return nil }
                group = group << 6 | UInt32(value)
            }
            let byteCount = 3 - paddingCount
            // Canonical form: the bits that padding leaves unused must be zero.
            guard group & ((1 << (8 * UInt32(3 - byteCount))) - 1) == 0 else { return nil }
            for byteIndex in 0..<byteCount {
                output.append(UInt8(truncatingIfNeeded: group >> (16 - 8 * UInt32(byteIndex))))
            }
            index += 4
        }
        return output
    }

    private static func appendSymbols(of group: UInt32, count: Int, to output: inout [UInt8]) {
        for position in 0..<count {
            output.append(alphabet[Int((group >> (18 - 6 * UInt32(position))) & 0x3F)])
        }
    }

    /// Number of `=` at the end of the final group (0 to 4; more than 2 is invalid).
    private static func trailingPaddingCount(_ input: [UInt8]) -> Int {
        var count = 0
        var index = input.count - 1
        while index >= input.count - 4 && input[index] == padding {
            count += 1
            index -= 1
        }
        return count
    }
}

extension Base64 {
    /// Decodes base64 in either alphabet (standard `+ /`, or URL-safe `- _`), padded with `=` or `.` or not padded,
    /// as browsers' web-safe encoders write it; `nil` for anything else (a stray character, a lone trailing
    /// symbol). Unused trailing bits are ignored.
    public static func decodeLenient(_ input: [UInt8]) -> [UInt8]? {
        var end = input.count
        var padding = 0
        while end > 0, input[end - 1] == UInt8(ascii: "=") || input[end - 1] == UInt8(ascii: ".") {
            end -= 1
            padding += 1
        }
        guard padding <= 2, end % 4 != 1 else { return nil }
        if padding > 0 { guard (end + padding) % 4 == 0 else { return nil } }
        var output: [UInt8] = []
        output.reserveCapacity(end / 4 * 3 + 2)
        var group: UInt32 = 0
        var bits = 0
        for index in 0..<end {
            let value = lenientTable[Int(input[index])]
            guard value != 0xFF else { return nil }
            group = group << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: group >> UInt32(bits)))
                group &= (1 << UInt32(bits)) - 1
            }
        }
        return output
    }

    /// Both alphabets' symbols to their 6-bit values, 0xFF for any other byte.
    private static let lenientTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, symbol) in alphabet.enumerated() { table[Int(symbol)] = UInt8(value) }
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "_"))] = 63
        return table
    }()
}
