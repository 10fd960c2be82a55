/// SHA-1 (FIPS 180-4), used only to compute `Sec-WebSocket-Accept` (RFC 6455 §4.2.2).
///
/// SHA-1 is broken for collision resistance, but the WebSocket handshake uses it as a fixed transform, not for
/// security; a small Swift implementation keeps `WebSocket` free of a libcrypto dependency (the layering: WebSocket must
/// not depend on TLS, docs/architecture.md). Inputs here are a few dozen bytes, so the code favours clarity over speed.
public enum SHA1 {
    /// Size of a digest in bytes.
    public static let digestCount = 20

    /// Returns the 20-byte SHA-1 digest of `bytes`.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var message = Array(bytes)
        let messageBitCount = UInt64(truncatingIfNeeded: message.count) &* 8
        message.append(0x80)
        while message.count % 64 != 56 {
            message.append(0)
        }
        for shift in stride(from: 56, through: 0, by: -8) {
            message.append(UInt8(truncatingIfNeeded: messageBitCount >> UInt64(shift)))
        }

        var state: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)
        var schedule = [UInt32](repeating: 0, count: 80)
        for blockStart in stride(from: 0, to: message.count, by: 64) {
            for index in 0..<16 {
                let offset = blockStart + index * 4
                schedule[index] = UInt32(message[offset]) << 24 | UInt32(message[offset + 1]) << 16
                    | UInt32(message[offset + 2]) << 8 | UInt32(message[offset + 3])
            }
            for index in 16..<80 {
                schedule[index] = rotateLeft(
                    schedule[index - 3] ^ schedule[index - 8] ^ schedule[index - 14] ^ schedule[index - 16], by: 1)
            }
            compress(&state, schedule: schedule)
        }

        var digest: [UInt8] = []
        digest.reserveCapacity(digestCount)
        for word in [state.0, state.1, state.2, state.3, state.4] {
            digest.append(UInt8(truncatingIfNeeded: word >> 24))
            digest.append(UInt8(truncatingIfNeeded: word >> 16))
            digest.append(UInt8(truncatingIfNeeded: word >> 8))
            digest.append(UInt8(truncatingIfNeeded: word))
        }
        return digest
    }

    /// Runs the 80 rounds of FIPS 180-4 §6.1.2 over one expanded block and adds the result into `state`.
    private static func compress(_ state: inout (UInt32, UInt32, UInt32, UInt32, UInt32), schedule: [UInt32]) {
        var (a, b, c, d, e) = state
        for round in 0..<80 {
            let mixed: UInt32
            let constant: UInt32
            switch round {
            case 0..<20:
                mixed = (b & c) | (~b & d)
                constant = 0x5A82_7999
            case 20..<40:
                mixed = b ^ c ^ d
                constant = 0x6ED9_EBA1
            case 40..<60:
                mixed = (b & c) | (b & d) | (c & d)
                constant = 0x8F1B_BCDC
            default:
                mixed = b ^ c ^ d
                constant = 0xCA62_C1D6
            }
            let next = rotateLeft(a, by: 5) &+ mixed &+ e &+ constant &+ schedule[round]
            e = d
            d = c
            c = rotateLeft(b, by: 30)
            b = a
            a = next
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e)
    }

    private static func rotateLeft(_ value: UInt32, by count: UInt32) -> UInt32 {
        (value << count) | (value >> (32 - count))
    }
}
