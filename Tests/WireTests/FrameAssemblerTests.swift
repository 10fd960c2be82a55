import DataModel
import Testing
import Wire

@Suite("FrameAssembler")
struct FrameAssemblerTests {
    /// A put of `size` bytes, as the SDK would serialize it.
    private func message(size: Int) -> [UInt8] {
        let head = #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/x","d":""#
        let tail = #""}}}"#
        return bytes(head + String(repeating: "a", count: size - head.utf8.count - tail.utf8.count) + tail)
    }

    /// Feeds `frames` and returns every output.
    private func feed(_ frames: [[UInt8]], into assembler: inout FrameAssembler) throws(WireError) -> [FrameAssembler.Output] {
        var outputs: [FrameAssembler.Output] = []
        for frame in frames { outputs.append(try assembler.receive(frame)) }
        return outputs
    }

    @Test("a complete message passes through; a keepalive is recognised")
    func singleFrames() throws {
        var assembler = FrameAssembler()
        let ping = bytes(#"{"t":"c","d":{"t":"p","d":{}}}"#)
        #expect(try assembler.receive(ping) == .message(ping))
        #expect(try assembler.receive(bytes("0")) == .keepalive)
        #expect(!assembler.isAssembling)
    }

    @Test("a split message reassembles at every piece size, one frame at a time")
    func everyPieceSize() throws {
        let whole = message(size: 200)
        for pieceSize in 1...whole.count {
            let pieces = stride(from: 0, to: whole.count, by: pieceSize).map {
                Array(whole[$0..<min($0 + pieceSize, whole.count)])
            }
            var assembler = FrameAssembler()
            let outputs = try feed([bytes(String(pieces.count))] + pieces, into: &assembler)
            let pending = (0..<pieces.count).reversed().map { FrameAssembler.Output.pending(remainingFrames: $0 + 1) }
            #expect(Array(outputs.dropLast()) == pending, "piece size \(pieceSize)")
            #expect(outputs.last == .message(whole), "piece size \(pieceSize)")
            #expect(!assembler.isAssembling)
        }
    }

    @Test("the spec's 40,000-character put arrives as 3 frames of 16384, 16384 and 7232")
    func specExampleTwelve() throws {
        let fixture = try #require(Fixture.named("example-12-framing-keepalive-ping"))
        let frames = fixture.steps.prefix(4).compactMap(\.frame).map(bytes)
        #expect(frames.dropFirst().map(\.count) == [16384, 16384, 7232])
        var assembler = FrameAssembler()
        let outputs = try feed(frames, into: &assembler)
        guard case .message(let whole)? = outputs.last else {
            Issue.record("no message")
            return
        }
        #expect(whole.count == 40_000)
        guard case .request(let request) = try ClientMessage.parse(whole), case .put(let put) = request.action else {
            Issue.record("not a put")
            return
        }
        #expect(request.number == 22)
        #expect(put.value.node.leafValue == .string(String(repeating: "A", count: 40_000 - 58)))
    }

    @Test("while assembling, every frame is a piece, even one that reads 0 or a count")
    func piecesAreOpaque() throws {
        var assembler = FrameAssembler()
        let outputs = try feed([bytes("3"), bytes(#"{"t":"d","d":{"r":1"#), bytes("0"), bytes(#","a":"unauth"}}"#)], into: &assembler)
        #expect(outputs.last == .message(bytes(#"{"t":"d","d":{"r":10,"a":"unauth"}}"#)))
        #expect(try ClientMessage.parse(bytes(#"{"t":"d","d":{"r":10,"a":"unauth"}}"#)) == .request(ClientRequest(number: 10, action: .unauth)))
    }

    @Test("a count of 1 and counts with leading zeros are accepted")
    func unusualCounts() throws {
        var assembler = FrameAssembler()
        #expect(try assembler.receive(bytes("1")) == .pending(remainingFrames: 1))
        #expect(try assembler.receive(bytes("{}")) == .message(bytes("{}")))
        #expect(try assembler.receive(bytes("002")) == .pending(remainingFrames: 2))
    }

    @Test("bad counts are errors", arguments: [
        ("-3", WireError.invalidFrameCount("-3")),
        ("-0", .invalidFrameCount("-0")),
        ("00", .invalidFrameCount("00")),
        ("10000", .tooManyFrames(announced: 10_000, limit: 9999)),
        ("999999", .tooManyFrames(announced: 999_999, limit: 9999)),
        ("99999999999999999999999", .tooManyFrames(announced: nil, limit: 9999)),
    ])
    func badCounts(frame: String, expected: WireError) {
        var assembler = FrameAssembler()
        #expect(throws: expected) { try assembler.receive(bytes(frame)) }
        #expect(!assembler.isAssembling)
    }

    @Test("a single frame over the byte limit is an error")
    func singleFrameTooLarge() {
        var assembler = FrameAssembler(limits: .init(maxMessageBytes: 100))
        #expect(throws: WireError.messageTooLarge(limit: 100)) { try assembler.receive(message(size: 101)) }
        #expect(throws: Never.self) { try assembler.receive(message(size: 100)) }
    }

    @Test("pieces over the byte limit fail as soon as the limit is passed, and the assembler starts over")
    func piecesTooLarge() throws {
        var assembler = FrameAssembler(limits: .init(maxMessageBytes: 100, maxFrameCount: 5))
        #expect(try assembler.receive(bytes("5")) == .pending(remainingFrames: 5))
        #expect(try assembler.receive([UInt8](repeating: 0x61, count: 60)) == .pending(remainingFrames: 4))
        #expect(throws: WireError.messageTooLarge(limit: 100)) {
            try assembler.receive([UInt8](repeating: 0x61, count: 41))
        }
        #expect(!assembler.isAssembling)
        #expect(try assembler.receive(bytes("0")) == .keepalive)
        #expect(throws: WireError.tooManyFrames(announced: 6, limit: 5)) { try assembler.receive(bytes("6")) }
    }

    @Test("reset drops a partly received message")
    func resetDropsPieces() throws {
        var assembler = FrameAssembler()
        _ = try assembler.receive(bytes("2"))
        _ = try assembler.receive(bytes("{"))
        assembler.reset()
        #expect(!assembler.isAssembling)
        #expect(try assembler.receive(bytes("{}")) == .message(bytes("{}")))
    }

    @Test("frames that are not counts go to the JSON parser, which rejects them precisely")
    func nonCounts() throws {
        var assembler = FrameAssembler()
        for frame in ["", "-", "3 ", "1.5", "+2"] {
            guard case .message(let message) = try assembler.receive(bytes(frame)) else {
                Issue.record("\(frame) was not passed through")
                continue
            }
            #expect(throws: WireError.self) { try ClientMessage.parse(message) }
        }
    }
}
