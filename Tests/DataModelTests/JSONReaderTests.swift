import Testing

@testable import DataModel

@Suite("JSONReader")
struct JSONReaderTests {
    private func read(_ text: String) throws(JSONError) -> JSONValue {
        try JSONReader.readValue(Array(text.utf8))
    }

    private func error(_ bytes: [UInt8], maxNesting: Int = JSONReader.defaultMaxNesting) -> JSONError? {
        do {
            _ = try JSONReader.readValue(bytes, maxNesting: maxNesting)
            return nil
        } catch {
            return error
        }
    }

    @Test("reads every kind of value")
    func values() throws {
        let value = try read(#" { "a" : [1, -2.5e3, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"] , "b":{} } "#)
        #expect(value["a"] == .array([.number(1), .number(-2500), .bool(true), .bool(false), .null,
            .string("x\"\\/\u{8}\u{C}\n\r\t\u{E9}😀")]))
        #expect(value["b"] == .object([]))
    }

    @Test("reports errors with byte offsets", arguments: [
        ("", 0, JSONError.Reason.unexpectedEnd),
        ("[1,]", 3, .unexpectedByte(UInt8(ascii: "]"))),
        (#"{"a" 1}"#, 5, .unexpectedByte(UInt8(ascii: "1"))),
        ("{1:2}", 1, .unexpectedByte(UInt8(ascii: "1"))),
        ("01", 1, .trailingCharacters),
        ("1 2", 2, .trailingCharacters),
        ("1.", 2, .unexpectedEnd),
        ("1.e3", 2, .invalidNumber),
        ("-", 1, .unexpectedEnd),
        ("-a", 1, .invalidNumber),
        ("+1", 0, .unexpectedByte(UInt8(ascii: "+"))),
        ("1e", 2, .unexpectedEnd),
        ("1e+", 3, .unexpectedEnd),
        (".5", 0, .unexpectedByte(UInt8(ascii: "."))),
        ("1e400", 0, .numberOutOfRange),
        ("-1e400", 0, .numberOutOfRange),
        (#""\x""#, 1, .invalidEscape),
        (#""\u12g4""#, 5, .invalidEscape),
        (#""\ud800""#, 1, .unpairedSurrogate),
        (#""\udc00""#, 1, .unpairedSurrogate),
        (#""\ud800\u0041""#, 1, .unpairedSurrogate),
        ("\"a\u{1}\"", 2, .controlCharacterInString),
        ("\"abc", 4, .unexpectedEnd),
        ("tru", 3, .unexpectedEnd),
        ("trux", 3, .unexpectedByte(UInt8(ascii: "x"))),
        ("nulL", 3, .unexpectedByte(UInt8(ascii: "L"))),
        ("NaN", 0, .unexpectedByte(UInt8(ascii: "N"))),
        ("[1 2]", 3, .unexpectedByte(UInt8(ascii: "2"))),
        (#"{"a":1,}"#, 7, .unexpectedByte(UInt8(ascii: "}"))),
    ])
    func errors(text: String, offset: Int, reason: JSONError.Reason) {
        #expect(error(Array(text.utf8)) == JSONError(offset: offset, reason: reason))
    }

    @Test("rejects invalid UTF-8 at the offending byte", arguments: [
        ([0x22, 0x61, 0xC3, 0x28, 0x22], 2),  // bad continuation
        ([0x22, 0xC0, 0xAF, 0x22], 1),  // overlong
        ([0x22, 0xED, 0xA0, 0x80, 0x22], 1),  // encoded surrogate
        ([0x22, 0x61, 0x62, 0xF4, 0x90, 0x80, 0x80, 0x22], 3),  // above U+10FFFF
        ([0x22, 0x5C, 0x6E, 0xFF, 0x22], 3),  // after an escape
    ] as [([UInt8], Int)])
    func invalidUTF8(bytes: [UInt8], offset: Int) {
        #expect(error(bytes) == JSONError(offset: offset, reason: .invalidUTF8))
    }

    @Test("limits nesting depth and input size")
    func limits() throws {
        let deep = String(repeating: "[", count: 5) + String(repeating: "]", count: 5)
        #expect(error(Array(deep.utf8), maxNesting: 4) == JSONError(offset: 4, reason: .nestingTooDeep(limit: 4)))
        #expect(error(Array(deep.utf8), maxNesting: 5) == nil)
        #expect(throws: JSONError(offset: 3, reason: .inputTooLarge(limit: 3))) {
            try JSONReader.readValue(Array("1234".utf8), maxBytes: 3)
        }
        let hostile = String(repeating: "[", count: 100_000)
        #expect(error(Array(hostile.utf8))?.reason == .nestingTooDeep(limit: JSONReader.defaultMaxNesting))
    }

    @Test("parses numbers exactly", arguments: [
        ("0", 0.0), ("-0", 0.0), ("123", 123), ("-123.5", -123.5), ("1e3", 1000), ("1E-3", 0.001), ("0.1", 0.1),
        ("9007199254740993", 9_007_199_254_740_992), ("123456789012345678901234567890", 1.2345678901234568e29),
        ("0.000000000000000000000000000001", 1e-30), ("2.2250738585072014e-308", 2.2250738585072014e-308),
        ("1.7976931348623157e308", 1.7976931348623157e308), ("4.9e-324", 5e-324), ("1e-400", 0),
        ("100000000000000000000000", 1e23), ("0.30000000000000004", 0.30000000000000004),
    ])
    func numbers(text: String, expected: Double) throws {
        let value = try read(text)
        #expect(value == .number(expected))
        if case .number(let number) = value { #expect(number.sign == .plus || expected < 0) }
    }

    @Test("splits an object into member ranges")
    func members() throws {
        let text = #" {"t":"d", "d" : {"r":1,"b":{"p":"/a","d":[1,{"x":null}]}} } "#
        let bytes = Array(text.utf8)
        let members = try bytes.withUnsafeBytes { try JSONReader.readMembers($0) }
        #expect(members.map(\.key) == ["t", "d"])
        #expect(String(decoding: bytes[members[1].range], as: UTF8.self) == #"{"r":1,"b":{"p":"/a","d":[1,{"x":null}]}}"#)
        #expect(throws: JSONError.self) { try Array("[1]".utf8).withUnsafeBytes { try JSONReader.readMembers($0) } }
    }

    @Test("every prefix of a valid document is rejected without crashing")
    func truncations() {
        let text = Array(#"{"a":[1,2.5e-3,"x\u00e9y",{"b":true,"c":null}],"d":"😀"}"#.utf8)
        for length in 0..<text.count {
            #expect(error(Array(text[..<length])) != nil)
        }
        #expect(error(text) == nil)
    }
}
