import Testing

@testable import LoadTester

/// Runs `body` over the UTF-8 bytes of `text`.
func withBytes<Result>(_ text: String, _ body: (JSONScan.Bytes) -> Result) -> Result {
    Array(text.utf8).withUnsafeBufferPointer(body)
}

@Suite("JSONScan")
struct JSONScanTests {
    @Test("finds a member after skipping strings with escapes, nested objects and arrays")
    func findsMemberAfterComplexValues() {
        let text = #"{ "a" : "x\"}y" , "b":{"c":[1,{"d":"]"}]}, "n": -12 , "k":"v"}"#
        withBytes(text) { bytes in
            #expect(JSONScan.member("n", of: bytes, objectAt: 0).flatMap { JSONScan.integer(bytes, at: $0) } == -12)
            #expect(JSONScan.member("k", of: bytes, objectAt: 0).map { JSONScan.isString(bytes, at: $0, "v") } == true)
            #expect(JSONScan.member("missing", of: bytes, objectAt: 0) == nil)
        }
    }

    @Test("descends into a nested object")
    func descendsIntoNestedObject() {
        withBytes(#"{"b":{"s":"ok","d":{}}}"#) { bytes in
            let body = JSONScan.member("b", of: bytes, objectAt: 0)
            let status = body.flatMap { JSONScan.member("s", of: bytes, objectAt: $0) }
            #expect(status.map { JSONScan.isString(bytes, at: $0, "ok") } == true)
        }
    }

    @Test("gives up on cut-off or malformed input", arguments: [
        #"{"a":"unterminated"#, #"{"a" 1}"#, #"{"a":{"b":1}"#, "[1,2]", "", #"{"a":1 "n":2}"#, "{",
    ])
    func givesUpOnBrokenInput(text: String) {
        withBytes(text) { bytes in
            #expect(JSONScan.member("n", of: bytes, objectAt: 0) == nil)
        }
    }

    @Test("reads integers and refuses fractions, exponents and overlong numbers", arguments: [
        ("0", Int64?(0)), ("123456789012", 123_456_789_012), ("-5}", -5), ("1.5", nil), ("1e3", nil), ("x", nil),
        ("-", nil), ("1234567890123456789", nil),
    ])
    func readsIntegers(text: String, expected: Int64?) {
        withBytes(text) { bytes in
            #expect(JSONScan.integer(bytes, at: 0) == expected)
        }
    }

    @Test("finds the end of every kind of value", arguments: [
        (#""a\"b",x"#, 6), ("{\"a\":[1,2]},", 11), ("[[],{}] ", 7), ("true}", 4), ("12", 2), ("null,", 4),
    ])
    func findsValueEnds(text: String, end: Int) {
        withBytes(text) { bytes in
            #expect(JSONScan.valueEnd(bytes, startingAt: 0) == end)
        }
    }

    @Test("walks members in order, yielding raw keys")
    func walksMembers() {
        withBytes(#"{"pad":"xx","seq":3,"ts":99,"w":0}"#) { bytes in
            var cursor = MemberCursor(bytes, objectAt: 0)
            var keys: [String] = []
            while let member = cursor.next() {
                keys.append(String(decoding: bytes[member.key], as: UTF8.self))
            }
            #expect(keys == ["pad", "seq", "ts", "w"])
        }
    }

    @Test("recognizes null only as a whole value", arguments: [
        ("null", true), ("null}", true), ("null ,", true), ("nul", false), ("nullx", false), ("\"null\"", false),
    ])
    func recognizesNull(text: String, isNull: Bool) {
        withBytes(text) { #expect(JSONScan.isNull($0, at: 0) == isNull) }
    }
}
