import Testing
import Wire

@Suite("FrameSplitter")
struct FrameSplitterTests {
    /// UTF-16 length of UTF-8 bytes.
    private func units(_ piece: [UInt8]) -> Int {
        String(decoding: piece, as: UTF8.self).utf16.count
    }

    /// Whether `piece` is valid UTF-8 on its own.
    private func isValidUTF8(_ piece: [UInt8]) -> Bool {
        var iterator = piece.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    @Test("a message of up to 16384 units is one frame, the message itself", arguments: [1, 100, 16384])
    func oneFrame(size: Int) throws {
        let message = [UInt8](repeating: 0x61, count: size)
        #expect(try FrameSplitter.frames(for: message) == [message])
    }

    @Test("16385 ASCII characters become a count and pieces of 16384 and 1")
    func justOver() throws {
        let message = [UInt8](repeating: 0x61, count: 16385)
        let frames = try FrameSplitter.frames(for: message)
        #expect(frames.map(\.count) == [1, 16384, 1])
        #expect(frames[0] == bytes("2"))
    }

    @Test("bytes beyond 16384 that are fewer units stay one frame")
    func multiByteWithinUnits() throws {
        let message = bytes(String(repeating: "é", count: 16384))
        #expect(message.count == 32768)
        #expect(try FrameSplitter.frames(for: message) == [message])
    }

    @Test("pieces never cut a scalar, count surrogate pairs as two units, and reassemble, at every piece size")
    func everyPieceSize() throws {
        let text = #"{"t":"d","d":{"a":"d","b":{"p":"/x","d":"aé€😀b😀😀cé€z"}}}"#
        let message = bytes(text)
        for maxUnits in 2...(text.utf16.count + 1) {
            let frames = try FrameSplitter.frames(for: message, maxFrameUnits: maxUnits)
            if frames.count == 1 {
                #expect(text.utf16.count <= maxUnits)
                continue
            }
            let pieces = Array(frames.dropFirst())
            #expect(frames[0] == bytes(String(pieces.count)))
            #expect(pieces.allSatisfy { !$0.isEmpty && units($0) <= maxUnits && isValidUTF8($0) }, "size \(maxUnits)")
            #expect(pieces.dropLast().allSatisfy { units($0) >= maxUnits - 1 }, "pieces are as full as allowed")
            #expect(Array(pieces.joined()) == message)
            var assembler = FrameAssembler()
            var last: FrameAssembler.Output?
            for frame in frames { last = try assembler.receive(frame) }
            #expect(last == .message(message))
        }
    }

    @Test("a message needing more pieces than clients accept is an error")
    func tooManyPieces() {
        let message = [UInt8](repeating: 0x61, count: 50)
        #expect(throws: WireError.tooManyFramesToSend(needed: 25, limit: 10)) {
            try FrameSplitter.frames(for: message, maxFrameUnits: 2, maxFrameCount: 10)
        }
        #expect(throws: Never.self) { try FrameSplitter.frames(for: message, maxFrameUnits: 5, maxFrameCount: 10) }
    }

    @Test("a large message splits into full pieces at the default size")
    func defaultSize() throws {
        let message = [UInt8](repeating: 0x61, count: 40_000)
        let frames = try FrameSplitter.frames(for: message)
        #expect(frames.map(\.count) == [1, 16384, 16384, 7232])
    }
}
