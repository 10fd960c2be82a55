import Primitives
import Testing

@Suite struct Base64Tests {
    @Test(
        "encodes and decodes the RFC 4648 §10 test vectors",
        arguments: [
            ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ])
    func rfcVectors(plain: String, encoded: String) {
        #expect(Base64.encode(Array(plain.utf8)) == encoded)
        #expect(Base64.decode(encoded) == Array(plain.utf8))
    }

    @Test("round-trips every byte value at every length remainder")
    func roundTrip() {
        let bytes = (0...255).map { UInt8($0) }
        for count in [253, 254, 255, 256] {
            let input = Array(bytes.prefix(count))
            #expect(Base64.decode(Base64.encode(input)) == input)
        }
    }

    @Test(
        "rejects non-canonical or malformed input",
        arguments: [
            "Zg=",  // length not a multiple of 4
            "Zh==",  // unused bits not zero
            "Zm9=",  // unused bits not zero
            "Z===",  // too much padding
            "====",
            "Zg==Zg==",  // padding before the end
            "Zm9v YmFy",  // whitespace
            "Zm9v\n",
            "Zm8*",  // not in the alphabet
            "Zm-_",  // URL-safe alphabet is not accepted
            "Zm=v",  // padding in the middle of a group
        ])
    func rejects(input: String) {
        #expect(Base64.decode(input) == nil)
    }
}

@Suite("lenient base64")
struct LenientBase64Tests {
    @Test("both alphabets, `=` or `.` padding, or none", arguments: [
        ("+/8=", [0xFB, 0xFF] as [UInt8]), ("-_8.", [0xFB, 0xFF]), ("-_8", [0xFB, 0xFF]), ("YQ..", [0x61]),
        ("YQ", [0x61]), ("", []), ("e30=", Array("{}".utf8)),
    ])
    func decodes(input: String, expected: [UInt8]) {
        #expect(Base64.decodeLenient(Array(input.utf8)) == expected)
    }

    @Test("a stray character, a lone trailing symbol or padding in the middle is refused", arguments: [
        "YQ=.=", "Y", "YQ.a", "Y Q", "YQ!=", "YQ...",
    ])
    func refuses(input: String) {
        #expect(Base64.decodeLenient(Array(input.utf8)) == nil)
    }
}
