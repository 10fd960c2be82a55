import Primitives
import Testing
import WebSocket

@Suite struct WebSocketFrameEncoderTests {
    private let hello = Array("Hello".utf8)

    @Test("encodes the RFC 6455 §5.7 examples")
    func rfcExamples() {
        #expect(WebSocketFrameEncoder.encode(opcode: .text, payload: hello) == [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        #expect(
            WebSocketFrameEncoder.encode(opcode: .text, payload: hello, maskingKey: testMaskingKey)
                == [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
        #expect(
            WebSocketFrameEncoder.encode(opcode: .text, payload: Array("Hel".utf8), fin: false)
                == [0x01, 0x03, 0x48, 0x65, 0x6C])
        #expect(
            WebSocketFrameEncoder.encode(opcode: .continuation, payload: Array("lo".utf8))
                == [0x80, 0x02, 0x6C, 0x6F])
        #expect(WebSocketFrameEncoder.encode(opcode: .ping, payload: hello) == [0x89, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        #expect(
            WebSocketFrameEncoder.encode(opcode: .pong, payload: hello, maskingKey: testMaskingKey)
                == [0x8A, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
        let binary256 = WebSocketFrameEncoder.encode(opcode: .binary, payload: [UInt8](repeating: 7, count: 256))
        #expect(Array(binary256.prefix(4)) == [0x82, 0x7E, 0x01, 0x00])
        #expect(binary256.count == 260)
        let binary64K = WebSocketFrameEncoder.encode(opcode: .binary, payload: [UInt8](repeating: 7, count: 65536))
        #expect(Array(binary64K.prefix(10)) == [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0])
        #expect(binary64K.count == 65546)
    }

    @Test(
        "header sizes follow the length encoding thresholds",
        arguments: [(0, 2), (125, 2), (126, 4), (65535, 4), (65536, 10), (1 << 40, 10)])
    func headerSizes(payloadCount: Int, unmaskedSize: Int) {
        #expect(WebSocketFrameEncoder.headerSize(payloadCount: payloadCount, masked: false) == unmaskedSize)
        #expect(WebSocketFrameEncoder.headerSize(payloadCount: payloadCount, masked: true) == unmaskedSize + 4)
    }

    @Test("a shared chunk holds the same bytes as an array encoding")
    func chunkMatchesArray() {
        for count in [0, 5, 200, 70_000] {
            let payload = (0..<count).map { UInt8(truncatingIfNeeded: $0) }
            let chunk = WebSocketFrameEncoder.encodeChunk(opcode: .binary, payload: payload, rsv1: true)
            #expect(chunk.array == WebSocketFrameEncoder.encode(opcode: .binary, payload: payload, rsv1: true))
        }
    }

    @Test("writeHeader writes only the header")
    func writeHeaderOnly() {
        var buffer = [UInt8](repeating: 0xEE, count: WebSocketFrameEncoder.maxHeaderSize)
        let written = buffer.withUnsafeMutableBytes {
            WebSocketFrameEncoder.writeHeader(into: $0, opcode: .text, payloadCount: 300, maskingKey: testMaskingKey)
        }
        #expect(written == 8)
        #expect(Array(buffer.prefix(8)) == [0x81, 0xFE, 0x01, 0x2C, 0x37, 0xFA, 0x21, 0x3D])
    }

    @Test("a WebSocketFrame encodes every flag")
    func frameValue() {
        let frame = WebSocketFrame(fin: false, rsv1: true, rsv2: true, rsv3: true, opcode: .binary, payload: [1])
        #expect(WebSocketFrameEncoder.encode(frame) == [0x72, 0x01, 0x01])
    }
}

@Suite struct WebSocketMaskingKeyTests {
    @Test("applying the key matches the byte-by-byte definition at every offset and length")
    func matchesDefinition() {
        let key = WebSocketMaskingKey(0x01, 0x80, 0xFE, 0x33)
        let keyBytes: [UInt8] = [0x01, 0x80, 0xFE, 0x33]
        for length in 0..<40 {
            for offset in 0..<8 {
                let original = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37) }
                var masked = original
                masked.withUnsafeMutableBytes { key.apply(to: $0, payloadOffset: offset) }
                let expected = original.enumerated().map { $0.element ^ keyBytes[($0.offset + offset) % 4] }
                #expect(masked == expected, "length \(length) offset \(offset)")
            }
        }
    }

    @Test("random keys vary")
    func randomKeysVary() {
        let keys = Set((0..<16).map { _ in WebSocketMaskingKey.random() })
        #expect(keys.count > 1)
    }
}
