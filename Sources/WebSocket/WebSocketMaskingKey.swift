/// The 32-bit masking key of a client-to-server frame (RFC 6455 §5.3).
///
/// Masking XORs payload byte *i* with key byte *i mod 4*. It exists to defeat cache poisoning of intermediaries,
/// not for secrecy, but §5.3 requires an unpredictable key per frame: use ``random()`` when sending.
public struct WebSocketMaskingKey: Sendable, Hashable {
    /// The four key bytes in wire order.
    public var bytes: (UInt8, UInt8, UInt8, UInt8)

    /// Creates a key from its four bytes in wire order.
    public init(_ byte0: UInt8, _ byte1: UInt8, _ byte2: UInt8, _ byte3: UInt8) {
        bytes = (byte0, byte1, byte2, byte3)
    }

    /// A key from the system's cryptographically secure generator, as §5.3 requires of clients.
    public static func random() -> WebSocketMaskingKey {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt32
        return WebSocketMaskingKey(
            UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8),
            UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 24))
    }

    /// Key byte `index` (0...3).
    @inlinable public subscript(index: Int) -> UInt8 {
        switch index & 3 {
        case 0: return bytes.0
        case 1: return bytes.1
        case 2: return bytes.2
        default: return bytes.3
        }
    }

    /// XORs `buffer` with the key in place; `offset` is the payload position of `buffer[0]`, so a payload can be
    /// (un)masked piece by piece as it arrives. Masking and unmasking are the same operation.
    public func apply(to buffer: UnsafeMutableRawBufferPointer, payloadOffset offset: Int) {
        let count = buffer.count
        guard count > 0 else { return }
        // Eight bytes at a time: byte j of the little-endian pattern is key[(j + offset) % 4].
        let key32 = UInt64(bytes.0) | UInt64(bytes.1) << 8 | UInt64(bytes.2) << 16 | UInt64(bytes.3) << 24
        var pattern = key32 | key32 << 32
        let shift = UInt64((offset & 3) * 8)
        if shift != 0 {
            pattern = pattern >> shift | pattern << (64 - shift)
        }
        let mask = UInt64(littleEndian: pattern)
        var index = 0
        while index + 8 <= count {
            let word = buffer.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            buffer.storeBytes(of: word ^ mask, toByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < count {
            buffer[index] ^= self[offset &+ index]
            index += 1
        }
    }

    /// Compares the four bytes.
    public static func == (lhs: WebSocketMaskingKey, rhs: WebSocketMaskingKey) -> Bool {
        lhs.bytes == rhs.bytes
    }

    /// Hashes the four bytes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.0)
        hasher.combine(bytes.1)
        hasher.combine(bytes.2)
        hasher.combine(bytes.3)
    }
}
