/// CRC-32C (Castagnoli), the checksum iSCSI, ext4 and most write-ahead logs use (RFC 3720 §12.1, Appendix B.4).
///
/// Reflected polynomial `0x82F63B78`, initial value and final XOR `0xFFFFFFFF`. Computed in software with
/// slicing-by-8 (eight 256-entry tables, eight input bytes per step), about 1–2 GB/s; that is far above the
/// journal's write rate, so the SSE4.2 `crc32` instruction is not worth a C shim here.
public enum CRC32C {
    /// The checksum of `bytes`.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        update(0, with: bytes)
    }

    /// The checksum of `bytes`.
    public static func checksum(_ bytes: some Collection<UInt8>) -> UInt32 {
        let contiguous = bytes.withContiguousStorageIfAvailable { update(0, with: UnsafeRawBufferPointer($0)) }
        if let contiguous { return contiguous }
        return Array(bytes).withUnsafeBytes { update(0, with: $0) }
    }

    /// Extends a finished checksum `crc` (of some earlier bytes) over `bytes`, so that
    /// `update(checksum(a), with: b) == checksum(a + b)`.
    public static func update(_ crc: UInt32, with bytes: UnsafeRawBufferPointer) -> UInt32 {
        var state = ~crc
        var index = 0
        let count = bytes.count
        tables.withUnsafeBufferPointer { table in
            while count - index >= 8 {
                let low = UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8
                    | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24
                let one = state ^ low
                state = table[7 &* 256 &+ Int(one & 0xFF)]
                    ^ table[6 &* 256 &+ Int((one >> 8) & 0xFF)]
                    ^ table[5 &* 256 &+ Int((one >> 16) & 0xFF)]
                    ^ table[4 &* 256 &+ Int(one >> 24)]
                    ^ table[3 &* 256 &+ Int(bytes[index + 4])]
                    ^ table[2 &* 256 &+ Int(bytes[index + 5])]
                    ^ table[1 &* 256 &+ Int(bytes[index + 6])]
                    ^ table[Int(bytes[index + 7])]
                index += 8
            }
            while index < count {
                state = table[Int((state ^ UInt32(bytes[index])) & 0xFF)] ^ (state >> 8)
                index += 1
            }
        }
        return ~state
    }

    /// Eight lookup tables of 256 entries each, laid out one after another; table 0 is the classic bytewise
    /// table and table `k` advances a byte that sits `k` positions earlier in the 8-byte block.
    private static let tables: [UInt32] = {
        let polynomial: UInt32 = 0x82F6_3B78
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 {
                crc = (crc & 1) != 0 ? (crc >> 1) ^ polynomial : crc >> 1
            }
            tables[byte] = crc
        }
        for slice in 1..<8 {
            for byte in 0..<256 {
                let previous = tables[(slice - 1) * 256 + byte]
                tables[slice * 256 + byte] = tables[Int(previous & 0xFF)] ^ (previous >> 8)
            }
        }
        return tables
    }()
}
