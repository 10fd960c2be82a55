import TestSupport
import Testing

@testable import DataModel

@Suite("A path read from its bytes")
struct PathFromBytesTests {
    /// The path `bytes` make by way of a `String`, `nil` when they are not valid UTF-8 or not a valid path.
    private func throughText(_ bytes: [UInt8], limits: DataLimits) -> Path? {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        return try? Path(text, limits: limits)
    }

    private func fromBytes(_ bytes: [UInt8], limits: DataLimits) -> Path? {
        bytes.withUnsafeBytes { Path(validatingUTF8: $0, limits: limits) }
    }

    @Test("agrees with the text parser on paths valid and not", arguments: [
        "", "/", "a", "/a/b/", "a//b", "///", "rooms/r1/messages", "a.b", "a$b", "a#b", "a[0]", "a]", "é/ü", "😀",
        "a\u{7F}", "a\u{1F}b", "x/.priority", String(repeating: "k", count: 768), String(repeating: "k", count: 769),
        String(repeating: "k/", count: 32), String(repeating: "k/", count: 33),
    ])
    func knownPaths(text: String) {
        for limits in [DataLimits.default, DataLimits(maxDepth: 2, maxKeyBytes: 3)] {
            #expect(fromBytes(Array(text.utf8), limits: limits) == throughText(Array(text.utf8), limits: limits))
        }
    }

    @Test("agrees with the text parser on random bytes, invalid UTF-8 among them")
    func randomBytes() {
        var random = SplitMix64(seed: 0xB17E5)
        let alphabet: [UInt8] = Array("ab/./$#[]-_0".utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xF0, 0xFF]
        var accepted = 0
        for _ in 0..<50_000 {
            let bytes = (0..<Int.random(in: 0...12, using: &random)).map { _ in
                alphabet.randomElement(using: &random) ?? 0
            }
            let limits = DataLimits(maxDepth: 3, maxKeyBytes: 4)
            let read = fromBytes(bytes, limits: limits)
            #expect(read == throughText(bytes, limits: limits), "\(bytes)")
            if read != nil { accepted += 1 }
        }
        #expect(accepted > 1_000)
    }
}
