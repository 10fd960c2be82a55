import DataModel
@testable import Store
import Testing

@Suite("BinaryReader")
struct BinaryReaderTests {
    static func readString(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { raw in
            var reader = BinaryReader(bytes: raw)
            return try? reader.readString()
        }
    }

    @Test("a string that fits is read")
    func stringThatFits() {
        #expect(Self.readString([0x01, 0x61]) == "a")
        #expect(Self.readString([0x00]) == "")
    }

    /// Found by StoreLoaderFuzz: the length was checked against the bytes left before the length prefix itself was
    /// read, so a length counting the prefix's own bytes read past the end of the buffer.
    @Test("a string whose length reaches past the end is refused")
    func stringPastTheEnd() {
        for bytes: [UInt8] in [[0x01], [0x02, 0x61], [0x82, 0x00, 0x61]] {
            #expect(Self.readString(bytes) == nil, "\(bytes)")
        }
        let node: Node? = [UInt8]([0x04, 0x01]).withUnsafeBytes { raw in
            var reader = BinaryReader(bytes: raw)
            return try? NodeCodec.decodeNode(from: &reader)
        }
        #expect(node == nil)
    }
}
