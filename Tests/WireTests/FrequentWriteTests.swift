import DataModel
import TestSupport
import Testing
@testable import Wire

/// The shortcut for a frequent put or merge must read a message exactly as the general parser does, or leave it to it.
@Suite("A frequent put or merge, recognized by its bytes")
struct FrequentWriteTests {
    /// The general parser's result, as a value to compare (`nil` when it rejects the message).
    private func general(_ text: [UInt8], limits: DataLimits) -> ClientMessage? {
        text.withUnsafeBytes { try? ClientMessage.parseAnyMessage($0, limits: limits) }
    }

    private func shortcut(_ text: [UInt8], limits: DataLimits) -> ClientMessage? {
        text.withUnsafeBytes { ClientMessage.frequentWrite($0, limits: limits) }
    }

    /// Pieces that make puts, near-puts and broken messages: request numbers, paths and data, each valid or not.
    private static let numbers = [
        "1", "0", "42", "007", "123456789012345", "1234567890123456", String(repeating: "9", count: 40), "1.0", "1e2",
        "-1", "\"5\"", "", "9x",
    ]
    private static let paths = [
        "", "a", "/a/b", "rooms/r1/messages", "a//b", "a.b", "a/.priority", "a\\/b", "a$b", "a[0]", "é", "a b",
        "x\u{1}", String(repeating: "k/", count: 40),
    ]
    private static let data = [
        "1", "-2.5e3", "true", "null", "\"text\"", "{\"seq\":1,\"pad\":\"xx\"}", "{\"a\":{\"b\":{\"c\":1}}}", "[1,2,3]",
        "{\".sv\":\"timestamp\"}", "{\".sv\":{\"increment\":2}}", "{\".value\":1,\".priority\":2}", "{}", "{\"a\":1}}",
        "1,\"h\":\"abc\"", "{\"a\":1},\"x\":2", "{\"a\" :1}", " 1", "1 ", "\"\\u00e9\"", "{\"a.b\":1}", "{\"a\":1",
        "[[[[[[[[[[1]]]]]]]]]]", "\"\u{FF}\"", "{\"a/b\":1,\"c\":{\"d\":2}}", "{\"a\":1,\"a/b\":2}", "{\"\":1}",
        "{\"x\":{\".sv\":\"timestamp\"}}",
    ]

    /// A put of a node or a merge: what the shortcut reads.
    private static func isPlainWrite(_ action: ClientAction) -> Bool {
        switch action {
        case .put(let put): if case .node = put.target { return true } else { return false }
        case .merge: return true
        default: return false
        }
    }

    /// A request number as the SDKs write it: digits without a leading zero, at most 15.
    private static func isPlain(number: String) -> Bool {
        (1...15).contains(number.utf8.count) && number.utf8.allSatisfy { $0 &- UInt8(ascii: "0") < 10 }
            && (number.utf8.first != UInt8(ascii: "0") || number == "0")
    }

    /// A path the shortcut reads: printable ASCII without escapes.
    private static func isPlain(path: String) -> Bool {
        path.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x80 && $0 != UInt8(ascii: "\\") }
    }

    /// Whether `text` is exactly one JSON value (not a value and more members after it).
    private static func isOneValue(_ text: String) -> Bool {
        (try? JSONReader.readValue(Array(text.utf8))) != nil
    }

    /// A message from the pieces: the SDKs' spelling, or one of several others the shortcut must not misread.
    private static func message(number: String, action: String, path: String, data: String, shape: Int) -> String {
        switch shape {
        case 0: #"{"t":"d","d":{"r":\#(number),"a":"\#(action)","b":{"p":"\#(path)","d":\#(data)}}}"#
        case 1: #"{"t":"d","d":{"r":\#(number),"a":"\#(action)","b":{"p":"\#(path)","d":\#(data),"h":"x"}}}"#
        case 2: #"{"t":"d","d":{"r":\#(number),"a":"o\#(action)","b":{"p":"\#(path)","d":\#(data)}}}"#
        case 3: #"{"t":"d","d":{"a":"\#(action)","r":\#(number),"b":{"p":"\#(path)","d":\#(data)}}}"#
        case 4: #"{"t":"d","d":{"r":\#(number),"a":"\#(action)","b":{"p":"\#(path)","d":\#(data)}},"t":"c"}"#
        case 5: #"{"t":"d","d":{"r":\#(number),"a":"\#(action)","b":{"p":"\#(path)","d":\#(data)},"r":9}}"#
        default: #"{"t":"d","d":{"r":\#(number),"a":"\#(action)","b":{"p":"\#(path)","d":\#(data)}}} "#
        }
    }

    /// Every message the pieces make: each number, action, path, data and shape.
    private static var combinations: [(number: String, path: String, data: String, shape: Int, text: [UInt8])] {
        var all: [(number: String, path: String, data: String, shape: Int, text: [UInt8])] = []
        for number in numbers {
            for action in ["p", "m", "q"] {
                for path in paths {
                    for data in Self.data {
                        for shape in 0...6 {
                            let text = message(number: number, action: action, path: path, data: data, shape: shape)
                            all.append((number, path, data, shape, Array(text.utf8)))
                        }
                    }
                }
            }
        }
        return all
    }

    @Test("every combination: what the shortcut takes, the general parser reads the same; it takes every plain write")
    func agreesWithTheGeneralParser() {
        var taken = 0
        for limits in [DataLimits.default, DataLimits(maxDepth: 3, maxKeyBytes: 8, maxStringBytes: 4)] {
            for message in Self.combinations {
                let expected = general(message.text, limits: limits)
                guard let quick = shortcut(message.text, limits: limits) else {
                    // Left to the general parser: only where the spelling differs from the SDKs' or the message is
                    // not a plain write it accepts.
                    if message.shape == 0, case .request(let request)? = expected, Self.isPlainWrite(request.action),
                       Self.isPlain(number: message.number), Self.isPlain(path: message.path),
                       Self.isOneValue(message.data)
                    {
                        Issue.record("a plain write was left to the general parser: \(String(decoding: message.text, as: UTF8.self))")
                    }
                    continue
                }
                taken += 1
                #expect(quick == expected, "\(String(decoding: message.text, as: UTF8.self))")
            }
        }
        #expect(taken > 200)
    }

    @Test("random bytes changed in a plain put or merge: the shortcut never reads a message differently")
    func mutatedWrites() {
        var random = SplitMix64(seed: 0x5EED_F00D)
        let bases = [
            Array(#"{"t":"d","d":{"r":17,"a":"p","b":{"p":"rooms/r1","d":{"seq":3,"pad":"xxxx"}}}}"#.utf8),
            Array(#"{"t":"d","d":{"r":17,"a":"m","b":{"p":"rooms","d":{"r1/seq":3,"r2":{"pad":"x"}}}}}"#.utf8),
        ]
        let alphabet = Array(#"{}[]":,.\/ 0123456789adpmrtbhx"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xFF]
        for round in 0..<40_000 {
            var text = bases[round % bases.count]
            for _ in 0...Int.random(in: 0...2, using: &random) {
                let position = Int.random(in: 0..<text.count, using: &random)
                switch Int.random(in: 0...2, using: &random) {
                case 0: text[position] = alphabet.randomElement(using: &random) ?? 0
                case 1: text.insert(alphabet.randomElement(using: &random) ?? 0, at: position)
                default: text.remove(at: position)
                }
            }
            guard let quick = shortcut(text, limits: .default) else { continue }
            #expect(quick == general(text, limits: .default), "\(text)")
        }
    }

    @Test("parse takes the shortcut for a plain put or merge and returns the general parser's errors for the rest")
    func parseUsesIt() throws {
        let put = Array(#"{"t":"d","d":{"r":7,"a":"p","b":{"p":"/a/b","d":{"x":1}}}}"#.utf8)
        #expect(shortcut(put, limits: .default) != nil)
        #expect(try ClientMessage.parse(put) == general(put, limits: .default))
        let merge = Array(#"{"t":"d","d":{"r":8,"a":"m","b":{"p":"/a","d":{"b/c":1,"d":null}}}}"#.utf8)
        #expect(shortcut(merge, limits: .default) != nil)
        #expect(try ClientMessage.parse(merge) == general(merge, limits: .default))
        let badPath = Array(#"{"t":"d","d":{"r":7,"a":"p","b":{"p":"a$b","d":1}}}"#.utf8)
        #expect(shortcut(badPath, limits: .default) == nil)
        #expect(throws: WireError.self) { try ClientMessage.parse(badPath) }
        do {
            _ = try ClientMessage.parse(badPath)
        } catch {
            #expect(error.requestNumber == 7)
        }
    }
}
