import Primitives
import Testing

@Suite struct SHA1Tests {
    /// Digests computed with Python's hashlib, covering the padding boundaries (55/56 and 63/64/65 bytes fill one
    /// or spill into a second block).
    @Test(
        "repeated 'a' hashes to the reference digest at every padding boundary",
        arguments: [
            (0, "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
            (3, "7e240de74fb1ed08fa08d38063f6a6a91462a815"),
            (55, "c1c8bbdc22796e28c0e15163d20899b65621d65a"),
            (56, "c2db330f6083854c99d4b5bfb6e8f29f201be699"),
            (63, "03f09f5b158a7a8cdad920bddc29b81c18a551f5"),
            (64, "0098ba824b5c16427bd7a1122a5a442a25ec644d"),
            (65, "11655326c708d70319be2610e8a57d9a5b959d3b"),
            (119, "ee971065aaa017e0632a8ca6c77bb3bf8b1dfc56"),
            (120, "f34c1488385346a55709ba056ddd08280dd4c6d6"),
        ])
    func repeatedA(count: Int, expected: String) {
        #expect(hex(SHA1.hash([UInt8](repeating: UInt8(ascii: "a"), count: count))) == expected)
    }

    @Test("the FIPS 180 two-block example hashes to its published digest")
    func fipsExample() {
        let message = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(hex(SHA1.hash(message)) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    }

    @Test("every byte value hashes correctly")
    func allByteValues() {
        let message = (0..<4).flatMap { _ in (0...255).map { UInt8($0) } }
        #expect(hex(SHA1.hash(message)) == "5b00669c480d5cffbdfa8bdba99561160f2d1b77")
        #expect(SHA1.hash(message[...]) == SHA1.hash(message))
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
        }.joined()
    }
}
