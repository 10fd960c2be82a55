import DataModel
@testable import Gateway
import TestSupport
import Testing

@Suite("PrettyJSON: print=pretty re-indentation")
struct PrettyJSONTests {
    private static func pretty(_ compact: String) -> String {
        text(PrettyJSON.format(Array(compact.utf8)))
    }

    @Test(
        "scalars and empty containers are left as they are (empty containers spaced)",
        arguments: [
            ("1", "1"), ("-2.5e-7", "-2.5e-7"), ("true", "true"), ("null", "null"), (#""x""#, #""x""#),
            ("{}", "{ }"), ("[]", "[ ]"), ("", ""),
        ])
    func scalars(compact: String, expected: String) {
        #expect(Self.pretty(compact) == expected)
    }

    @Test("objects and arrays: two spaces per level, \"key\" : value, one member per line")
    func nested() {
        let compact = #"{"a":1,"b":[1,{"c":null},[]],"d":{},"e":{"f":{"g":"h"}}}"#
        #expect(Self.pretty(compact) == """
            {
              "a" : 1,
              "b" : [
                1,
                {
                  "c" : null
                },
                [ ]
              ],
              "d" : { },
              "e" : {
                "f" : {
                  "g" : "h"
                }
              }
            }
            """)
    }

    @Test("a top-level array of empty containers")
    func arrayOfEmpties() {
        #expect(Self.pretty("[{},[],{}]") == "[\n  { },\n  [ ],\n  { }\n]")
    }

    @Test(
        "structural characters, escaped quotes and backslashes inside strings are left alone",
        arguments: [
            #"{"k{,:}":"v[,:]"}"#,
            #"{"a\"b":"c\\"}"#,
            #"{"q":"\\\"{,}"}"#,
            #"["\\",",","\"",":"]"#,
            #"{"x":"\\\\"}"#,
            #"{"u":"\u00e9\n\t{"}"#,
            #"{"":"","{}":"[]"}"#,
        ])
    func structuralCharactersInStrings(compact: String) throws {
        let formatted = PrettyJSON.format(Array(compact.utf8))
        #expect(try JSONReader.readValue(formatted) == JSONReader.readValue(Array(compact.utf8)))
        #expect(Self.withoutLayout(formatted) == Array(compact.utf8))
    }

    @Test("an escaped quote before a string's end does not end it early")
    func escapedQuote() {
        #expect(Self.pretty(#"{"a\"":"b\\","c":1}"#) == "{\n  \"a\\\"\" : \"b\\\\\",\n  \"c\" : 1\n}")
    }

    @Test("random JSON values re-parse to the same value, and removing the layout gives the compact text back")
    func randomValues() throws {
        for seed in UInt64(0)..<400 {
            var random = SplitMix64(seed: seed)
            let value = Self.randomValue(depth: 0, random: &random)
            var writer = JSONWriter()
            writer.write(value)
            let compact = writer.bytes
            let formatted = PrettyJSON.format(compact)
            let reparsed = try JSONReader.readValue(formatted)
            #expect(reparsed == value, "seed \(seed): \(text(compact))")
            #expect(Self.withoutLayout(formatted) == compact, "seed \(seed)")
            #expect(Self.indentationMatchesDepth(formatted), "seed \(seed): \(text(formatted))")
        }
    }

    // MARK: - Helpers

    /// `json` without the spaces and newlines outside strings.
    private static func withoutLayout(_ json: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        var inString = false
        var escaped = false
        for byte in json {
            if inString {
                output.append(byte)
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true }
                else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") { continue }
            if byte == UInt8(ascii: "\"") { inString = true }
            output.append(byte)
        }
        return output
    }

    /// Whether every line is indented by two spaces per container open at its start (closers one level less), and
    /// no line ends in a space.
    private static func indentationMatchesDepth(_ json: [UInt8]) -> Bool {
        var depth = 0
        for line in json.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            let indent = line.prefix { $0 == UInt8(ascii: " ") }.count
            let content = line.dropFirst(indent)
            guard let first = content.first, content.last != UInt8(ascii: " ") else { return false }
            let closes = first == UInt8(ascii: "}") || first == UInt8(ascii: "]")
            if indent != 2 * (closes ? depth - 1 : depth) { return false }
            var inString = false
            var escaped = false
            for byte in content {
                if inString {
                    if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true }
                    else if byte == UInt8(ascii: "\"") { inString = false }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
                default: break
                }
            }
        }
        return depth == 0
    }

    private static let alphabet: [String] = [
        "a", "Z", "0", " ", "{", "}", "[", "]", ",", ":", "\"", "\\", "\\\"", "\n", "\t", "\u{1}", "\u{1F}", "é", "✓",
        "😀", "\u{7F}", "/",
    ]

    private static func randomString(random: inout SplitMix64) -> String {
        (0..<Int.random(in: 0...8, using: &random)).map { _ in random.pick(alphabet) }.joined()
    }

    private static func randomValue(depth: Int, random: inout SplitMix64) -> JSONValue {
        let kind = Int.random(in: 0..<(depth >= 4 ? 5 : 7), using: &random)
        switch kind {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .number(Double(Int.random(in: -1_000_000...1_000_000, using: &random)))
        case 3:
            let magnitude = Double.random(in: -30...30, using: &random)
            return .number(Double.random(in: -1...1, using: &random) * powerOfTen(magnitude))
        case 4: return .string(randomString(random: &random))
        case 5:
            return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in
                randomValue(depth: depth + 1, random: &random)
            })
        default:
            var members: [(key: String, value: JSONValue)] = []
            var used = Set<String>()
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                let key = randomString(random: &random)
                guard used.insert(key).inserted else { continue }
                members.append((key, randomValue(depth: depth + 1, random: &random)))
            }
            return .object(members)
        }
    }
}

/// 10 to the power `exponent`, rounded to an integer (exact enough for test data).
private func powerOfTen(_ exponent: Double) -> Double {
    var result = 1.0
    let steps = Int(exponent.rounded())
    for _ in 0..<abs(steps) { result = steps < 0 ? result / 10 : result * 10 }
    return result
}
