import Primitives
import Testing

@Suite("ASCII byte helpers")
struct ASCIIBytesTests {
    private func integer(_ text: String, at offset: Int = 0, maxDigits: Int = 15) -> (value: Int, end: Int)? {
        Array(text.utf8).withUnsafeBytes { ASCIIBytes.jsonInteger(in: $0, at: offset, maxDigits: maxDigits) }
    }

    @Test("a JSON integer: digits without a leading zero, up to the limit, whatever follows")
    func jsonIntegers() {
        #expect(integer("0,")! == (0, 1))
        #expect(integer("r:42}", at: 2)! == (42, 4))
        #expect(integer("123456789012345")! == (123_456_789_012_345, 15))
        #expect(integer("1234567890123456") == nil)  // one digit past the limit
        #expect(integer(String(repeating: "9", count: 40)) == nil)  // never summed past the limit
        #expect(integer("007") == nil)
        #expect(integer("-1") == nil)
        #expect(integer("") == nil)
        #expect(integer("5", maxDigits: 0) == nil)
        #expect(integer(String(repeating: "9", count: 40), maxDigits: 40) == nil)  // at most 17 digits
        #expect(integer("5", at: 3) == nil)
    }

    @Test("fixed bytes at an offset, false when they do not fit")
    func matches() {
        let text = Array(#"{"t":"d"}"#.utf8)
        text.withUnsafeBytes { bytes in
            #expect(ASCIIBytes.matches(bytes, at: 0, Array(#"{"t""#.utf8)))
            #expect(ASCIIBytes.matches(bytes, at: 5, Array(#""d"}"#.utf8)))
            #expect(!ASCIIBytes.matches(bytes, at: 6, Array(#""d"}"#.utf8)))
            #expect(!ASCIIBytes.matches(bytes, at: -1, Array("{".utf8)))
            #expect(ASCIIBytes.matches(bytes, at: 9, []))
        }
    }
}
