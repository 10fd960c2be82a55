import DataModel
import Foundation
import Testing
import TestSupport

@testable import CanopyDatabase

/// A set's one-pass conversion (``ValueConversion/checkedJSON(_:depth:)``: the JSON text, and whether it is plain
/// data whose node can be read later) against the path it replaced: the text read back by the data model's reader
/// at once.
@Suite("Value conversion in one pass")
struct ValueWriterTests {
    /// A conversion's outcome: the data, or the error's text.
    enum Outcome: Equatable {
        case value(WriteValue)
        case error(String)
    }

    /// The path before: `value`'s JSON text read at once at `depth`.
    static func readAtOnce(_ value: Any?, depth: Int) -> Outcome {
        do {
            let json = try ValueConversion.jsonBytes(value)
            do {
                return .value(try JSONReader.readData(json, depth: depth))
            } catch {
                return .error("invalid data: \(error)")
            }
        } catch {
            return .error(error.description)
        }
    }

    /// A set's conversion, with its plain data read the way local listeners get it (``LocalValue``), and whether
    /// the data was plain.
    static func checked(_ value: Any?, depth: Int) -> (outcome: Outcome, plain: Bool) {
        do {
            let (json, read) = try ValueConversion.checkedJSON(value, depth: depth)
            if let read { return (.value(read), false) }
            return (.value(WriteValue(node: LocalValue(json: json, depth: depth).node)), true)
        } catch {
            return (.error(error.description), false)
        }
    }

    @Test("random values: plain data is what the reader accepts without server values; results and errors agree")
    func differential() throws {
        var random = SplitMix64(seed: 0xC0FFEE)
        var plain = 0
        var readAtOnce = 0
        var failed = 0
        for _ in 0..<20_000 {
            var generator = RandomValue(random: random)
            let value = generator.value(nesting: 0)
            random = generator.random
            let depth = Int.random(in: 0...(random.chance(0.1) ? 34 : 3), using: &random)
            let expected = Self.readAtOnce(value, depth: depth)
            let (outcome, isPlain) = Self.checked(value, depth: depth)
            #expect(outcome == expected, "\(String(describing: value)) at depth \(depth)")
            if isPlain {
                // The property the deferred read rests on: the reader takes plain data as it is.
                guard case .value(let read) = expected else {
                    Issue.record("plain data the reader refuses: \(String(describing: value)) at depth \(depth)")
                    continue
                }
                #expect(read.serverValues.isEmpty)
                plain += 1
            } else if case .value = outcome {
                readAtOnce += 1
            } else {
                failed += 1
            }
            if case .value = outcome {
                #expect(try ValueConversion.checkedJSON(value, depth: depth).json == ValueConversion.jsonBytes(value))
            }
        }
        // Every kind of outcome is exercised, and most writable values are plain.
        #expect(plain > 5_000 && readAtOnce > 500 && failed > 500,
                "plain \(plain), read at once \(readAtOnce), failed \(failed)")
    }

    @Test("plain data is left unread; metadata, server values and invalid data are read at once")
    func whichPath() throws {
        let record: [String: Any] = ["seq": 12, "pad": "xx", "nested": ["b": true, "a": [1.5, NSNull(), "c"]]]
        #expect(Self.checked(record, depth: 2).plain)
        #expect(Self.checked(NSNumber(value: 7), depth: 0).plain)
        #expect(Self.checked(nil, depth: 0).plain)
        #expect(Self.checked(["a": ["b": 1]], depth: 30).plain)
        #expect(!Self.checked(["a": 1, ".priority": 2], depth: 0).plain)
        #expect(!Self.checked(["at": [".sv": "timestamp"]], depth: 0).plain)
        #expect(Self.checked(["a/b": 1], depth: 0).outcome == Self.readAtOnce(["a/b": 1], depth: 0))
        #expect(!Self.checked(["a": ["b": 1]], depth: 31).plain)

        let (_, stamped) = try ValueConversion.checkedJSON(["at": [".sv": "timestamp"], "n": 1], depth: 0)
        #expect(stamped?.serverValues.count == 1)
        let (_, prioritized) = try ValueConversion.checkedJSON(["a": 1, ".priority": 2], depth: 0)
        #expect(prioritized?.node.priority == .number(2))
        let (json, array) = try ValueConversion.checkedJSON([NSNull(), "x", [:] as [String: Any], 3], depth: 0)
        #expect(array == nil)
        let node = LocalValue(json: json, depth: 0).node
        #expect(node.childCount == 2)
        #expect(node.child(try Key("1")) == Node(.string("x")))
        #expect(node.child(try Key("3")) == Node(.number(3)))
    }

    @Test("errors keep their texts")
    func errors() {
        #expect(Self.checked(["a": Double.nan], depth: 0).outcome == .error("numbers must be finite, not nan"))
        #expect(Self.checked(["a": Date(timeIntervalSince1970: 0)], depth: 0).outcome
            == .error("cannot store a value of type Date"))
        guard case .error(let text) = Self.checked(["a b": ["c#": 1]], depth: 0).outcome else {
            Issue.record("an invalid key was accepted")
            return
        }
        #expect(text.hasPrefix("invalid data: "))
    }
}

/// Random values as an app hands them over: Swift and Foundation types, nested objects and arrays, keys valid and
/// not, metadata and server values, numbers at the edges.
struct RandomValue {
    var random: SplitMix64

    static let keys = [
        "a", "b", "seq", "pad", "0", "1", "2", "10", "-1", "007", "-0", "00", "é", "e\u{301}", "😀", "\u{FFFF}",
        "with space", "tab\t", "", "a.b", "a/b", "$x", "#", "[", "]", "\u{7F}", ".priority", ".value", ".sv", ".x",
        String(repeating: "k", count: 768), String(repeating: "k", count: 769),
    ]
    static let strings = ["", "x", "quote \" and \\ backslash", "line\nfeed\u{0}", "é", "e\u{301}", "😀", "10"]
    static let doubles: [Double] = [
        0, -0.0, 1, -1, 0.1, 1.5, 1e21, 1e-7, 123456789.125, 9_007_199_254_740_994, -9_007_199_254_740_992,
        .leastNonzeroMagnitude, .greatestFiniteMagnitude, .pi, .infinity, .nan,
    ]

    mutating func value(nesting: Int) -> Any? {
        let containers = nesting < 6 ? 4 : 0
        switch Int.random(in: 0..<(12 + containers), using: &random) {
        case 0: return random.pick(Self.strings)
        case 1: return Int.random(in: -1_000_000...1_000_000, using: &random)
        case 2: return random.pick([Int.max, Int.min, 9_007_199_254_740_993])
        case 3: return random.pick(Self.doubles)
        case 4: return Double(bitPattern: random.next())
        case 5: return random.chance(0.5)
        case 6: return NSNumber(value: random.chance(0.5))
        case 7: return random.chance(0.5) ? NSNumber(value: Int.random(in: -99...99, using: &random))
            : NSNumber(value: random.pick(Self.doubles))
        case 8: return random.chance(0.5) ? NSNull() : nil
        case 9: return random.chance(0.5) ? Float(1.25) : Int32(-7)
        case 10: return random.chance(0.9) ? String(repeating: "s", count: Int.random(in: 0...40, using: &random))
            : Date()
        case 11: return serverValue()
        case 12, 13: return object(nesting: nesting)
        case 14: return array(nesting: nesting)
        default: return chain(length: Int.random(in: 25...40, using: &random))
        }
    }

    mutating func object(nesting: Int) -> Any {
        var object: [String: Any] = [:]
        for _ in 0..<Int.random(in: 0...6, using: &random) {
            let key = random.chance(0.85) ? random.pick(Array(Self.keys.prefix(14))) : random.pick(Self.keys)
            object[key] = value(nesting: nesting + 1) ?? NSNull()
        }
        if random.chance(0.05) {
            return object.reduce(into: [AnyHashable: Any]()) { $0[AnyHashable($1.key)] = $1.value }
        }
        return object
    }

    mutating func array(nesting: Int) -> Any {
        (0..<Int.random(in: 0...5, using: &random)).map { _ in value(nesting: nesting + 1) ?? NSNull() } as [Any]
    }

    mutating func serverValue() -> Any {
        switch Int.random(in: 0..<3, using: &random) {
        case 0: return [".sv": "timestamp"]
        case 1: return [".sv": ["increment": 2]]
        default: return [".value": random.pick(Self.strings), ".priority": Int.random(in: 0...9, using: &random)]
        }
    }

    /// Objects nested `length` deep, around the data model's depth limit.
    mutating func chain(length: Int) -> Any {
        var value: Any = "leaf"
        for _ in 0..<length { value = ["c": value] }
        return value
    }
}
