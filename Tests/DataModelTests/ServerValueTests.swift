import Testing

@testable import DataModel

@Suite("ServerValue")
struct ServerValueTests {
    private func resolve(_ json: String, existing: Node = .empty, at timestamp: Double = 1_718_049_600_000) throws -> Node {
        let value = try JSONReader.readData(Array(json.utf8))
        return try value.resolved(timestamp: timestamp) { existing.descendant(at: $0) }
    }

    @Test("timestamp resolves to the server clock in milliseconds")
    func timestamp() throws {
        #expect(export(try resolve(#"{".sv":"timestamp"}"#)) == "1718049600000")
        #expect(export(try resolve(#"{"t":{".sv":"timestamp"},"x":1}"#)) == #"{"t":1718049600000,"x":1}"#)
    }

    @Test("increment adds to a number and replaces anything else", arguments: [
        ("5", "7"), ("null", "2"), (#""five""#, "2"), ("true", "2"), (#"{"a":1}"#, "2"), ("-2", "0"), ("0.5", "2.5"),
        ("9007199254740992", "9007199254740994"), ("1.7976931348623157e308", "1.7976931348623157e+308"),
    ])
    func increment(existing: String, expected: String) throws {
        #expect(export(try resolve(#"{".sv":{"increment":2}}"#, existing: try node(existing))) == expected)
    }

    @Test("integer sums beyond 2^53 round to the nearest double")
    func largeIntegers() throws {
        let result = try resolve(#"{".sv":{"increment":1}}"#, existing: try node("9007199254740992"))
        #expect(result == Node(.number(9_007_199_254_740_992)))
    }

    @Test("an overflowing increment is rejected")
    func overflow() throws {
        #expect(throws: ValueError.numberOutOfRange) {
            try resolve(#"{".sv":{"increment":1.7976931348623157e308}}"#, existing: try node("1.7976931348623157e308"))
        }
    }

    @Test("increments read the existing value at their own path")
    func nestedIncrement() throws {
        let existing = try node(#"{"a":{"count":41},"b":"x"}"#)
        let result = try resolve(#"{"a":{"count":{".sv":{"increment":1}}},"b":{".sv":{"increment":1}}}"#, existing: existing)
        #expect(export(result) == #"{"a":{"count":42},"b":1}"#)
    }

    @Test("priorities survive: placeholder priorities and priorities of objects holding only placeholders")
    func priorities() throws {
        #expect(export(try resolve(#"{".sv":"timestamp",".priority":"p"}"#)) == #"{".value":1718049600000,".priority":"p"}"#)
        #expect(export(try resolve(#"{"a":{".sv":"timestamp"},".priority":3}"#)) == #"{"a":1718049600000,".priority":3}"#)
        #expect(export(try resolve(#"{"a":1,".priority":{".sv":"timestamp"}}"#)) == #"{"a":1,".priority":1718049600000}"#)
        let existing = try node(#"{"a":1,".priority":10}"#)
        #expect(export(try resolve(#"{"a":1,".priority":{".sv":{"increment":5}}}"#, existing: existing)) == #"{"a":1,".priority":15}"#)
    }
}

@Suite("PushIDGenerator")
struct PushIDTests {
    @Test("encodes the timestamp in the first 8 characters")
    func timestampPrefix() {
        var generator = PushIDGenerator()
        let id = generator.next(timestamp: 1_718_049_600_000)
        #expect(id.utf8.count == 20)
        #expect(id.hasPrefix("-O-2j67-"))
        #expect(PushIDGenerator.timestamp(of: id) == 1_718_049_600_000)
        #expect(PushIDGenerator.timestamp(of: "-JSOpn9ZC54A4P4RoqVa") == 1_405_961_581_220)
    }

    @Test("ids are strictly increasing within a millisecond and when the clock steps back")
    func monotonic() throws {
        var generator = PushIDGenerator()
        var previous = try Key(generator.next(timestamp: 1000))
        for step in 0..<5000 {
            let timestamp: Int64 = step % 7 == 0 ? 999 : 1000 + Int64(step / 100)
            let id = try Key(generator.next(timestamp: timestamp))
            #expect(previous < id)
            #expect(id.integerValue == nil)
            previous = id
        }
    }

    @Test("the random part carries like a base-64 counter")
    func carry() {
        struct Maximum: RandomNumberGenerator, Sendable {
            mutating func next() -> UInt64 { UInt64.max }
        }
        var generator = PushIDGenerator(randomNumbers: Maximum())
        let first = generator.next(timestamp: 0)
        let second = generator.next(timestamp: 0)
        #expect(first == "--------zzzzzzzzzzzz")
        #expect(second == "-------0------------")
    }
}
