@testable import Gateway
import Primitives
import Testing

@Suite("QueryString: percent-decoded REST query parameters")
struct QueryStringTests {
    @Test(
        "a value is percent-decoded; a bad escape is kept; + stays a plus",
        arguments: [
            ("v=%22a%22", "\"a\""),
            ("v=%24key", "$key"),
            ("v=1%2C%22k%22", "1,\"k\""),
            ("v=%2c", ","),
            ("v=%zz", "%zz"),
            ("v=%2", "%2"),
            ("v=%", "%"),
            ("v=50%", "50%"),
            ("v=%%41", "%A"),
            ("v=%G1", "%G1"),
            ("v=a+b", "a+b"),
            ("v=a%2Bb", "a+b"),
            ("v=a%20b", "a b"),
            ("v=%C3%A9", "é"),
            ("v=%E2%9C%93", "✓"),
            ("v=plain", "plain"),
            ("v=a=b", "a=b"),
        ])
    func decodesValues(query: String, expected: String) {
        #expect(QueryString(query)["v"] == expected)
    }

    @Test("names are percent-decoded too")
    func decodesNames() {
        let parameters = QueryString("order%42y=%22x%22&%24=1")
        #expect(parameters["orderBy"] == "\"x\"")
        #expect(parameters["$"] == "1")
        #expect(parameters["order%42y"] == nil)
    }

    @Test("a parameter given twice keeps its last value")
    func lastValueWins() {
        let parameters = QueryString("print=pretty&a=1&print=silent&a=2&a=3")
        #expect(parameters["print"] == "silent")
        #expect(parameters["a"] == "3")
    }

    @Test("empty names, empty values, names without = and empty pairs")
    func emptyParts() {
        let parameters = QueryString("&&=5&a=&b&&c=1&")
        #expect(parameters[""] == "5")
        #expect(parameters["a"] == "")
        #expect(parameters["b"] == "")
        #expect(parameters["c"] == "1")
        #expect(parameters["d"] == nil)
    }

    @Test("no query and an empty query have no parameters", arguments: [nil, "", "&", "&&&"] as [String?])
    func noParameters(query: String?) {
        let parameters = QueryString(query)
        #expect(!parameters.containsAny(["", "a", "orderBy"]))
        #expect(parameters[""] == nil)
    }

    @Test(
        "bytes that are not UTF-8 after decoding become replacement characters instead of vanishing",
        arguments: [
            ("v=%FF", "\u{FFFD}"),
            ("v=a%C3", "a\u{FFFD}"),
            ("v=%C3%28", "\u{FFFD}("),
            ("v=%ED%A0%80", "\u{FFFD}\u{FFFD}\u{FFFD}"),
        ])
    func invalidUTF8(query: String, expected: String) {
        let value = QueryString(query)["v"]
        #expect(value?.unicodeScalars.elementsEqual(expected.unicodeScalars) == true)
    }

    @Test("a name that is not UTF-8 is kept with a replacement character")
    func invalidUTF8Name() {
        #expect(QueryString("%FF=1")["\u{FFFD}"] == "1")
    }

    @Test("containsAny reports whether any listed name is present, even with an empty value")
    func containsAny() {
        let parameters = QueryString("startAt=&print=pretty")
        #expect(parameters.containsAny(["limitToFirst", "startAt"]))
        #expect(!parameters.containsAny(["limitToFirst", "endAt"]))
        #expect(!parameters.containsAny([]))
    }

    @Test("decoding bytes directly matches decoding through a query")
    func decodeBytes() {
        #expect(PercentDecoding.decode(Array("%2Fa%2fb%".utf8)) == "/a/b%")
        #expect(PercentDecoding.decode(Array("no-escapes".utf8)) == "no-escapes")
        #expect(PercentDecoding.decode([]) == "")
    }
}
