import Primitives
import Testing
import WebSocket
@testable import WebSocketDeflate

/// A server state machine with a permessage-deflate codec using the RFC's default parameters (context takeover).
private func deflateServer(
    parameters: PerMessageDeflateParameters = .init(), limits: WebSocketLimits = WebSocketLimits()
) -> WebSocketConnectionStateMachine {
    WebSocketConnectionStateMachine(
        role: .server, limits: limits, codec: PerMessageDeflateCodec(role: .server, parameters: parameters))
}

private let hello = Array("Hello".utf8)
/// RFC 7692 §7.2.3.1: "Hello" compressed.
private let compressedHello: [UInt8] = [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00]

@Suite struct PerMessageDeflateDecodingTests {
    @Test(
        "decodes the RFC 7692 §7.2.3 examples for every split of the input",
        arguments: [
            ("7.2.3.1 one message", [compressedHello], ["Hello"]),
            ("7.2.3.2 shared window", [compressedHello, [0xF2, 0x00, 0x11, 0x00, 0x00]], ["Hello", "Hello"]),
            ("7.2.3.3 stored block", [[0x00, 0x05, 0x00, 0xFA, 0xFF, 0x48, 0x65, 0x6C, 0x6C, 0x6F, 0x00]], ["Hello"]),
            (
                "7.2.3.4 BFINAL, then a message using the window", [[0xF3, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00, 0x00], [0xF2, 0x00, 0x11, 0x00, 0x00]],
                ["Hello", "Hello"]
            ),
            ("7.2.3.5 two blocks", [[0xF2, 0x48, 0x05, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xCA, 0xC9, 0xC9, 0x07, 0x00]], ["Hello"]),
            ("7.2.3.6 empty message", [[0x00]], [""]),
        ] as [(String, [[UInt8]], [String])])
    func rfcExamples(label: String, payloads: [[UInt8]], texts: [String]) {
        let bytes = payloads.flatMap { clientFrame(.text, $0, rsv1: true) }
        expectDripFed(bytes, produce: texts.map(Outcome.text), machine: { deflateServer() })
    }

    @Test("a compressed message split over fragments decodes (RFC 7692 §7.2.3.1)")
    func fragmented() {
        let bytes =
            clientFrame(.text, Array(compressedHello.prefix(3)), fin: false, rsv1: true)
            + clientFrame(.ping) + clientFrame(.continuation, Array(compressedHello.dropFirst(3)))
        expectDripFed(bytes, produce: [.send(.server(.pong)), .text("Hello")], machine: { deflateServer() })
    }

    @Test("uncompressed messages still work when deflate is negotiated")
    func uncompressedMessage() {
        expectDripFed(clientFrame(.text, text: "plain"), produce: [.text("plain")], machine: { deflateServer() })
    }

    @Test("RSV1 on a continuation or control frame fails the connection with 1002")
    func rsv1OnWrongFrames() {
        expectDripFed(
            clientFrame(.text, compressedHello, fin: false, rsv1: true) + clientFrame(.continuation, [], rsv1: true),
            produce: Outcome.failed(.reservedBitsSet), machine: { deflateServer() })
        expectDripFed(clientFrame(.ping, [], rsv1: true), produce: Outcome.failed(.reservedBitsSet), machine: { deflateServer() })
    }

    @Test("corrupt compressed data fails the connection with 1007")
    func corruptData() {
        expectDripFed(
            clientFrame(.binary, [0xFF, 0xFF, 0xFF], rsv1: true), produce: Outcome.failed(.invalidCompressedData),
            machine: { deflateServer() })
    }

    @Test("invalid UTF-8 inside a compressed text message fails the connection with 1007")
    func invalidTextInsideCompression() throws {
        let text = [UInt8](repeating: 0x61, count: 200) + [0xFF]
        let compressed = try #require(PerMessageDeflateSharedCompressor().compress(text))
        expectDripFed(
            clientFrame(.text, compressed, rsv1: true), produce: Outcome.failed(.invalidUTF8InTextMessage),
            machine: { deflateServer() })
    }

    @Test("a small frame that inflates past maxMessageBytes fails with 1009 instead of expanding")
    func inflateBomb() throws {
        let zeros = [UInt8](repeating: 0, count: 8 << 20)
        let bomb = try #require(PerMessageDeflateSharedCompressor().compress(zeros))
        #expect(bomb.count < 16 * 1024)
        let limits = WebSocketLimits(maxFrameBytes: 64 * 1024, maxMessageBytes: 1 << 20)
        var machine = deflateServer(limits: limits)
        #expect(feed(&machine, [clientFrame(.binary, bomb, rsv1: true)]) == Outcome.failed(.messageTooLarge(limit: 1 << 20)))
        // The same bytes within the limit are fine.
        var roomy = deflateServer(limits: WebSocketLimits(maxFrameBytes: 64 * 1024, maxMessageBytes: 8 << 20))
        #expect(feed(&roomy, [clientFrame(.binary, bomb, rsv1: true)]) == [.message(.binary(zeros))])
    }
}

@Suite struct PerMessageDeflateEncodingTests {
    @Test("compresses \"Hello\" to the RFC 7692 §7.2.3.1 bytes and reuses the window with context takeover")
    func rfcEncoding() throws {
        let codec = PerMessageDeflateCodec(
            role: .server, parameters: .init(), configuration: .init(compressionThreshold: 0))
        #expect(hello.withUnsafeBytes { codec.encode($0) } == compressedHello)
        let second = try #require(hello.withUnsafeBytes { codec.encode($0) })
        #expect(second.count < compressedHello.count)
        // The client's decoder, sharing the window, recovers both.
        var client = WebSocketConnectionStateMachine(
            role: .client, codec: PerMessageDeflateCodec(role: .client, parameters: .init()))
        let frames = [compressedHello, second].flatMap {
            WebSocketFrameEncoder.encode(opcode: .text, payload: $0, rsv1: true)
        }
        #expect(feed(&client, [frames]) == [.text("Hello"), .text("Hello")])
    }

    @Test("without context takeover, a message that does not shrink is sent uncompressed")
    func incompressibleWithoutTakeover() {
        let codec = PerMessageDeflateCodec(
            role: .server, parameters: .init(serverNoContextTakeover: true),
            configuration: .init(compressionThreshold: 0))
        #expect(hello.withUnsafeBytes { codec.encode($0) } == nil)
    }

    @Test("messages below the threshold go uncompressed, larger ones compressed")
    func threshold() {
        var server = WebSocketConnectionStateMachine(
            role: .server,
            codec: PerMessageDeflateCodec(role: .server, parameters: .init(serverNoContextTakeover: true)))
        let small = [UInt8](repeating: 0x61, count: PerMessageDeflateConfiguration.defaultCompressionThreshold - 1)
        let large = [UInt8](repeating: 0x61, count: 1000)
        #expect(SentFrame.decode(server.encodeMessage(small, opcode: .text))?.rsv1 == false)
        let compressed = SentFrame.decode(server.encodeMessage(large, opcode: .text))
        #expect(compressed?.rsv1 == true)
        #expect((compressed?.payload.count ?? .max) < 100)
    }

    @Test("a shared compressor's frame equals the per-connection encoding and is decodable by every client")
    func sharedCompression() throws {
        let parameters = PerMessageDeflateParameters(serverNoContextTakeover: true)
        let codec = PerMessageDeflateCodec(role: .server, parameters: parameters)
        #expect(codec.sharedCompressionWindowBits == 15)
        #expect(PerMessageDeflateCodec(role: .server, parameters: .init()).sharedCompressionWindowBits == nil)
        let message = Array(String(repeating: "{\"path\":\"/rooms/1\",\"value\":42}", count: 20).utf8)
        let shared = PerMessageDeflateSharedCompressor()
        let once = try #require(shared.compress(message))
        #expect(shared.compress(message) == once)
        #expect(message.withUnsafeBytes { PerMessageDeflate.compressOnce($0) } == once)
        #expect(message.withUnsafeBytes { codec.encode($0) } == once)
        let chunk = WebSocketFrameEncoder.encodeChunk(opcode: .text, payload: once, rsv1: true)
        for _ in 0..<3 {
            var client = WebSocketConnectionStateMachine(
                role: .client, codec: PerMessageDeflateCodec(role: .client, parameters: parameters))
            #expect(feed(&client, [chunk.array, chunk.array]) == [.message(.text(message)), .message(.text(message))])
        }
    }

    /// A pseudo-random block over 16 letters, repeated: every match is `period` bytes back.
    private func periodicText(period: Int, repeats: Int) -> [UInt8] {
        var state: UInt32 = 12_345
        let block = (0..<period).map { _ -> UInt8 in
            state = state &* 1_103_515_245 &+ 12_345
            return UInt8(ascii: "a") + UInt8((state >> 16) & 15)
        }
        return Array((0..<repeats).map { _ in block }.joined())
    }

    /// Inflates one byte of output at a time, so every back-reference must come from the zlib window itself (zlib
    /// otherwise also resolves references from the output buffer of the same call).
    private func inflateThroughWindow(_ compressed: [UInt8], windowBits: Int) throws -> [UInt8] {
        var inflated: [UInt8] = []
        let inflater = try ZlibInflater(windowBits: windowBits, outputChunkBytes: 1)
        try compressed.withUnsafeBytes { try inflater.inflate($0, isFinal: true, into: &inflated, maxOutputCount: .max) }
        return inflated
    }

    @Test("output for an 8-bit window inflates with a 256-byte window")
    func windowBits8() throws {
        // Matches 240 bytes back: fine for a 256-byte window.
        let text = periodicText(period: 240, repeats: 60)
        let compressed = try #require(PerMessageDeflateSharedCompressor(windowBits: 8).compress(text))
        #expect(compressed.count < text.count / 4)
        #expect(try inflateThroughWindow(compressed, windowBits: 8) == text)
    }

    @Test("the window check in these tests can fail: 400-byte distances do not fit a 256-byte window")
    func windowCheckCanFail() throws {
        let text = periodicText(period: 400, repeats: 30)
        let compressed = try #require(PerMessageDeflateSharedCompressor(windowBits: 10).compress(text))
        #expect(try inflateThroughWindow(compressed, windowBits: 10) == text)
        #expect(throws: WebSocketProtocolError.invalidCompressedData) {
            try inflateThroughWindow(compressed, windowBits: 8)
        }
    }
}
