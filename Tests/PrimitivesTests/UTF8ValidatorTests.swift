import TestSupport
import Primitives
import Testing

@Suite struct UTF8ValidatorTests {
    @Test(
        "accepts valid text",
        arguments: [
            "", "hello", "Grüße", "κόσμε", "日本語", "😀 emoji", "\u{7F}\u{80}\u{7FF}\u{800}\u{FFFF}\u{10000}\u{10FFFF}",
            "\u{D7FF}\u{E000}", String(repeating: "ascii fast path ", count: 10) + "é",
        ])
    func acceptsValidText(text: String) {
        #expect(UTF8Validator.isValid(Array(text.utf8)))
    }

    /// Each case: the bytes, and the index of the first byte that proves them invalid.
    @Test(
        "fails at the first byte that proves the text invalid",
        arguments: [
            ([0x80], 0),  // continuation without lead
            ([0xC0, 0x80], 0),  // overlong lead C0
            ([0xC1, 0xBF], 0),  // overlong lead C1
            ([0xF5, 0x80, 0x80, 0x80], 0),  // above U+10FFFF
            ([0xFF], 0),
            ([0x61, 0xE0, 0x80, 0x80], 2),  // overlong three-byte form
            ([0xED, 0xA0, 0x80], 1),  // surrogate U+D800
            ([0xF0, 0x80, 0x80, 0x80], 1),  // overlong four-byte form
            ([0xF4, 0x90, 0x80, 0x80], 1),  // U+110000
            ([0xC2, 0x41], 1),  // lead without continuation
            ([0xE2, 0x82, 0x41], 2),
            ([0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0xFE], 9),  // after an ASCII run
        ] as [([UInt8], Int)])
    func failsFast(bytes: [UInt8], failingIndex: Int) {
        var validator = UTF8Validator()
        let prefixIsValid = validator.validate(Array(bytes[..<failingIndex]))
        #expect(prefixIsValid)
        let failingByteIsValid = validator.validate([bytes[failingIndex]])
        #expect(!failingByteIsValid)
        // Once failed, it stays failed.
        let laterByteIsValid = validator.validate([0x61])
        #expect(!laterByteIsValid)
        #expect(!validator.isComplete)
        #expect(!UTF8Validator.isValid(bytes))
    }

    @Test("a sequence cut off at the end is incomplete but not yet invalid")
    func truncatedSequence() {
        var validator = UTF8Validator()
        let startIsValid = validator.validate([0x61, 0xE2, 0x82])
        #expect(startIsValid)
        #expect(!validator.isComplete)
        let endIsValid = validator.validate([0xAC])
        #expect(endIsValid)
        #expect(validator.isComplete)
        #expect(!UTF8Validator.isValid([0xE2, 0x82]))
    }

    @Test("validation is the same for every split of the input")
    func everySplitPoint() {
        let samples: [[UInt8]] = [
            Array("aé日😀z".utf8),
            [0x61, 0xF4, 0x8F, 0xBF, 0xBF, 0x62],
            [0x61, 0xF4, 0x90, 0x80, 0x80],
            [0xED, 0x9F, 0xBF, 0xED, 0xA0, 0x80],
        ]
        for sample in samples {
            let expected = String(validating: sample, as: UTF8.self) != nil
            for split in 0...sample.count {
                var validator = UTF8Validator()
                let first = validator.validate(Array(sample[..<split]))
                let second = first && validator.validate(Array(sample[split...]))
                #expect((second && validator.isComplete) == expected, "split at \(split) of \(sample)")
            }
        }
    }

    @Test("agrees with the standard library on pseudo-random byte strings")
    func agreesWithStandardLibrary() {
        var generator = SplitMix64(seed: 0x5EED)
        // Bias towards bytes that form multi-byte sequences so that most strings are neither trivially valid nor
        // invalid at the first byte.
        let alphabet: [UInt8] = [0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC2, 0xDF, 0xE0, 0xE1, 0xED, 0xEE, 0xF0,
            0xF1, 0xF4, 0xF5]
        for _ in 0..<20_000 {
            let count = Int(generator.next() % 8)
            let bytes = (0..<count).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            #expect(UTF8Validator.isValid(bytes) == (String(validating: bytes, as: UTF8.self) != nil), "\(bytes)")
        }
    }

    @Test("reset forgets a failure")
    func resetForgetsFailure() {
        var validator = UTF8Validator()
        let invalidByteIsValid = validator.validate([0xFF])
        #expect(!invalidByteIsValid)
        validator.reset()
        let afterResetIsValid = validator.validate([0x61])
        #expect(afterResetIsValid)
        #expect(validator.isComplete)
    }
}
