import Primitives
import Testing

@Suite("CRC32C")
struct CRC32CTests {
    static let readCommandPDU: [UInt8] = [
        0x01, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
        0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ]

    /// RFC 3720 Appendix B.4, plus the customary check value of "123456789".
    static let vectors: [(name: String, bytes: [UInt8], checksum: UInt32)] = [
        ("32 zero bytes", [UInt8](repeating: 0, count: 32), 0x8A91_36AA),
        ("32 0xFF bytes", [UInt8](repeating: 0xFF, count: 32), 0x62A8_AB43),
        ("32 incrementing bytes", (0..<32).map { UInt8($0) }, 0x46DD_794E),
        ("32 decrementing bytes", (0..<32).reversed().map { UInt8($0) }, 0x113F_DB5C),
        ("an iSCSI read command PDU", readCommandPDU, 0xD996_3A56),
        ("123456789", Array("123456789".utf8), 0xE306_9283),
    ]

    @Test("matches the RFC 3720 test vectors", arguments: vectors.indices)
    func rfcVectors(index: Int) {
        let vector = Self.vectors[index]
        #expect(CRC32C.checksum(vector.bytes) == vector.checksum, "\(vector.name)")
    }

    @Test("an update over a second part equals the checksum of the whole, at every split point")
    func incrementalUpdate() {
        let bytes = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let whole = CRC32C.checksum(bytes)
        for split in 0...bytes.count {
            let first = CRC32C.checksum(Array(bytes[..<split]))
            let combined = Array(bytes[split...]).withUnsafeBytes { CRC32C.update(first, with: $0) }
            #expect(combined == whole, "split at \(split)")
        }
    }

    @Test("the empty input has checksum zero")
    func emptyInput() {
        #expect(CRC32C.checksum([UInt8]()) == 0)
    }
}
