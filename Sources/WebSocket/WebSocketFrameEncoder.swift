import Primitives

/// Serializes frames to wire bytes (RFC 6455 §5.2).
///
/// Every entry point writes the header and the (optionally masked) payload into one allocation. For fan-out, a
/// server encodes a message once with ``encodeChunk(opcode:payload:fin:rsv1:)`` and hands the same immutable
/// ``ByteChunk`` to every connection; that works because server frames are never masked (§5.1), so the bytes do not
/// depend on the receiver.
public enum WebSocketFrameEncoder {
    /// Largest possible header: 2 fixed bytes, an 8-byte extended length and a 4-byte masking key.
    public static let maxHeaderSize = 14

    /// Number of header bytes for a payload of `payloadCount` bytes: 2, plus 2 or 8 for the extended length
    /// (§5.2: 126 means a 16-bit length follows, 127 a 64-bit one), plus 4 when masked.
    @inlinable
    public static func headerSize(payloadCount: Int, masked: Bool) -> Int {
        precondition(payloadCount >= 0, "negative payload count")
        let lengthBytes = payloadCount < 126 ? 0 : (payloadCount <= 0xFFFF ? 2 : 8)
        return 2 + lengthBytes + (masked ? 4 : 0)
    }

    /// Encodes one frame; a masking key makes it a client frame.
    public static func encode(
        opcode: WebSocketOpcode, payload: UnsafeRawBufferPointer, fin: Bool = true, rsv1: Bool = false,
        maskingKey: WebSocketMaskingKey? = nil
    ) -> [UInt8] {
        let header = Header(fin: fin, rsv1: rsv1, rsv2: false, rsv3: false, opcode: opcode, maskingKey: maskingKey)
        let total = headerSize(payloadCount: payload.count, masked: maskingKey != nil) + payload.count
        return [UInt8](unsafeUninitializedCapacity: total) { buffer, initializedCount in
            initializedCount = write(header, payload: payload, into: UnsafeMutableRawBufferPointer(buffer))
        }
    }

    /// Encodes one frame; a masking key makes it a client frame.
    public static func encode(
        opcode: WebSocketOpcode, payload: [UInt8], fin: Bool = true, rsv1: Bool = false,
        maskingKey: WebSocketMaskingKey? = nil
    ) -> [UInt8] {
        payload.withUnsafeBytes { encode(opcode: opcode, payload: $0, fin: fin, rsv1: rsv1, maskingKey: maskingKey) }
    }

    /// Encodes an arbitrary frame, including reserved bits (for tests and fuzz seeds; peers reject rsv2/rsv3).
    public static func encode(_ frame: WebSocketFrame) -> [UInt8] {
        let header = Header(
            fin: frame.fin, rsv1: frame.rsv1, rsv2: frame.rsv2, rsv3: frame.rsv3, opcode: frame.opcode,
            maskingKey: frame.maskingKey)
        let total = headerSize(payloadCount: frame.payload.count, masked: frame.maskingKey != nil) + frame.payload.count
        return frame.payload.withUnsafeBytes { payload in
            [UInt8](unsafeUninitializedCapacity: total) { buffer, initializedCount in
                initializedCount = write(header, payload: payload, into: UnsafeMutableRawBufferPointer(buffer))
            }
        }
    }

    /// Encodes an unmasked (server) frame into an immutable chunk that any number of connections can share.
    public static func encodeChunk(
        opcode: WebSocketOpcode, payload: UnsafeRawBufferPointer, fin: Bool = true, rsv1: Bool = false
    ) -> ByteChunk {
        let header = Header(fin: fin, rsv1: rsv1, rsv2: false, rsv3: false, opcode: opcode, maskingKey: nil)
        let total = headerSize(payloadCount: payload.count, masked: false) + payload.count
        return ByteChunk(capacity: total) { buffer in
            write(header, payload: payload, into: UnsafeMutableRawBufferPointer(buffer))
        }
    }

    /// Encodes an unmasked (server) frame into an immutable chunk that any number of connections can share.
    public static func encodeChunk(
        opcode: WebSocketOpcode, payload: [UInt8], fin: Bool = true, rsv1: Bool = false
    ) -> ByteChunk {
        payload.withUnsafeBytes { encodeChunk(opcode: opcode, payload: $0, fin: fin, rsv1: rsv1) }
    }

    /// Writes only a frame header into `destination` (which must hold ``maxHeaderSize`` bytes) and returns its size;
    /// for callers that place the payload themselves, e.g. in an iovec after the header.
    public static func writeHeader(
        into destination: UnsafeMutableRawBufferPointer, opcode: WebSocketOpcode, payloadCount: Int,
        fin: Bool = true, rsv1: Bool = false, maskingKey: WebSocketMaskingKey? = nil
    ) -> Int {
        precondition(destination.count >= maxHeaderSize, "header buffer smaller than maxHeaderSize")
        let header = Header(fin: fin, rsv1: rsv1, rsv2: false, rsv3: false, opcode: opcode, maskingKey: maskingKey)
        return writeHeader(header, payloadCount: payloadCount, into: destination)
    }

    // MARK: - Private

    /// The first-byte flags, opcode and key of a frame to encode.
    private struct Header {
        var fin: Bool
        var rsv1: Bool
        var rsv2: Bool
        var rsv3: Bool
        var opcode: WebSocketOpcode
        var maskingKey: WebSocketMaskingKey?
    }

    /// Writes header and payload (masking it if needed) and returns the number of bytes written.
    private static func write(
        _ header: Header, payload: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer
    ) -> Int {
        let headerCount = writeHeader(header, payloadCount: payload.count, into: destination)
        guard payload.count > 0, let source = payload.baseAddress, let base = destination.baseAddress else {
            return headerCount
        }
        let body = UnsafeMutableRawBufferPointer(start: base + headerCount, count: payload.count)
        body.copyMemory(from: UnsafeRawBufferPointer(start: source, count: payload.count))
        header.maskingKey?.apply(to: body, payloadOffset: 0)
        return headerCount + payload.count
    }

    private static func writeHeader(
        _ header: Header, payloadCount: Int, into destination: UnsafeMutableRawBufferPointer
    ) -> Int {
        var first = header.opcode.rawValue
        if header.fin { first |= 0x80 }
        if header.rsv1 { first |= 0x40 }
        if header.rsv2 { first |= 0x20 }
        if header.rsv3 { first |= 0x10 }
        destination[0] = first
        let maskBit: UInt8 = header.maskingKey == nil ? 0 : 0x80
        var index: Int
        if payloadCount < 126 {
            destination[1] = maskBit | UInt8(truncatingIfNeeded: payloadCount)
            index = 2
        } else if payloadCount <= 0xFFFF {
            destination[1] = maskBit | 126
            destination[2] = UInt8(truncatingIfNeeded: payloadCount >> 8)
            destination[3] = UInt8(truncatingIfNeeded: payloadCount)
            index = 4
        } else {
            destination[1] = maskBit | 127
            let length = UInt64(payloadCount)
            for byte in 0..<8 {
                destination[2 + byte] = UInt8(truncatingIfNeeded: length >> UInt64(56 - 8 * byte))
            }
            index = 10
        }
        if let key = header.maskingKey {
            destination[index] = key.bytes.0
            destination[index + 1] = key.bytes.1
            destination[index + 2] = key.bytes.2
            destination[index + 3] = key.bytes.3
            index += 4
        }
        return index
    }
}

extension WebSocketFrameEncoder {
    /// The payloads of the complete unmasked frames back to back in `frames`, as ``encodeChunk(opcode:payload:fin:rsv1:)``
    /// writes them; for a transport that carries a shared push without WebSocket framing. Stops at the first frame
    /// that is masked or incomplete (never the case for this encoder's output).
    public static func payloads(ofEncodedFrames frames: UnsafeRawBufferPointer) -> [[UInt8]] {
        var payloads: [[UInt8]] = []
        var offset = 0
        while offset + 2 <= frames.count {
            let second = frames[offset + 1]
            guard second & 0x80 == 0 else { break }
            var length = Int(second & 0x7F)
            var header = 2
            if length == 126 {
                guard offset + 4 <= frames.count else { break }
                length = Int(frames[offset + 2]) << 8 | Int(frames[offset + 3])
                header = 4
            } else if length == 127 {
                guard offset + 10 <= frames.count else { break }
                var value: UInt64 = 0
                for index in 2..<10 { value = value << 8 | UInt64(frames[offset + index]) }
                guard value <= UInt64(frames.count) else { break }
                length = Int(value)
                header = 10
            }
            guard offset + header + length <= frames.count else { break }
            payloads.append(Array(frames[(offset + header)..<(offset + header + length)]))
            offset += header + length
        }
        return payloads
    }
}
