import DataModel

/// One JSON object inside a message: its members' keys and absolute byte ranges, decoded on demand.
///
/// The envelope levels are split with ``JSONReader/readMembers(_:maxNesting:maxBytes:)`` so that written data is
/// parsed once, straight from its bytes, into a ``WriteValue``; only the small members are decoded as ``JSONValue``.
/// Optional members that are JSON `null` count as absent.
struct MessageObject {
    /// The whole message.
    let message: UnsafeRawBufferPointer
    /// This object's member path from the envelope (`d.b`), `""` for the message itself.
    let name: String
    /// Members in input order with ranges relative to ``offset``.
    let members: [(key: String, keyOffset: Int, range: Range<Int>)]
    /// Where this object starts in ``message``.
    let offset: Int
    /// Nesting limit for decoding members.
    let maxNesting: Int

    /// Splits the object at `range` of `message`.
    ///
    /// - Throws: `.wrongType(name, .object)` when the (already validated) value there is not an object.
    init(message: UnsafeRawBufferPointer, range: Range<Int>, name: String, maxNesting: Int) throws(MessageProblem) {
        let slice = UnsafeRawBufferPointer(rebasing: message[range])
        do {
            members = try JSONReader.readMembers(slice, maxNesting: maxNesting, maxBytes: Int.max)
        } catch {
            throw .wrongType(member: name, expected: .object)
        }
        self.message = message
        self.offset = range.lowerBound
        self.name = name
        self.maxNesting = maxNesting
    }

    /// An object without members (a request whose `b` is absent).
    init(emptyIn message: UnsafeRawBufferPointer, name: String, maxNesting: Int) {
        self.message = message
        self.offset = 0
        self.name = name
        self.members = []
        self.maxNesting = maxNesting
    }

    /// The dotted name of member `key`.
    func memberName(_ key: String) -> String {
        name.isEmpty ? key : name + "." + key
    }

    /// The byte range of member `key` (the last one if repeated, as `JSON.parse` keeps), `nil` when absent or null.
    func range(of key: String) -> Range<Int>? {
        guard let range = rawRange(of: key) else { return nil }
        if range.count == 4 && message[range.lowerBound] == UInt8(ascii: "n") { return nil }
        return range
    }

    /// The byte range in ``message`` of member `key` even when its value is `null`, `nil` only when absent.
    func rawRange(of key: String) -> Range<Int>? {
        let count = key.utf8.count
        guard let member = members.last(where: { $0.key.utf8.count == count && $0.key.utf8.elementsEqual(key.utf8) })
        else { return nil }
        return (member.range.lowerBound + offset)..<(member.range.upperBound + offset)
    }

    /// The bytes of `range`.
    func slice(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: message[range])
    }

    /// Member `key` decoded generically, `nil` when absent or null.
    func value(_ key: String) throws(MessageProblem) -> JSONValue? {
        guard let range = range(of: key) else { return nil }
        return try value(at: range, member: memberName(key))
    }

    /// The value at `range` (of the member named `member`) decoded generically.
    func value(at range: Range<Int>, member: String) throws(MessageProblem) -> JSONValue {
        do {
            return try JSONReader.readValue(slice(range), maxNesting: maxNesting, maxBytes: Int.max)
        } catch {
            throw .invalidData(member: member, JSONError(offset: range.lowerBound + error.offset, reason: error.reason))
        }
    }

    /// The byte range of the required member `key`, which may be `null`.
    func required(_ key: String) throws(MessageProblem) -> Range<Int> {
        guard let range = rawRange(of: key) else { throw .missingMember(memberName(key)) }
        return range
    }

    /// Member `key` as a string, `nil` when absent.
    func string(_ key: String) throws(MessageProblem) -> String? {
        guard let value = try value(key) else { return nil }
        guard case .string(let text) = value else { throw .wrongType(member: memberName(key), expected: .string) }
        return text
    }

    /// Member `key` as a required string.
    func requiredString(_ key: String) throws(MessageProblem) -> String {
        guard let text = try string(key) else { throw .missingMember(memberName(key)) }
        return text
    }

    /// Member `key` as a boolean, `nil` when absent.
    func bool(_ key: String) throws(MessageProblem) -> Bool? {
        guard let value = try value(key) else { return nil }
        guard case .bool(let flag) = value else { throw .wrongType(member: memberName(key), expected: .boolean) }
        return flag
    }

    /// Member `key` as an integer, `nil` when absent: a JSON number without fraction within ±2^53, or (leniently) a
    /// string of 1 to 15 decimal digits.
    func integer(_ key: String) throws(MessageProblem) -> Int? {
        guard let value = try value(key) else { return nil }
        switch value {
        case .number(let number) where number == number.rounded() && number.magnitude <= 9_007_199_254_740_992:
            return Int(number)
        case .string(let text) where (1...15).contains(text.utf8.count)
            && text.utf8.allSatisfy({ $0 &- UInt8(ascii: "0") < 10 }):
            return text.utf8.reduce(0) { $0 * 10 + Int($1 &- UInt8(ascii: "0")) }
        default:
            throw .wrongType(member: memberName(key), expected: .integer)
        }
    }

    /// Member `key` as a nested object, `nil` when absent.
    func object(_ key: String) throws(MessageProblem) -> MessageObject? {
        guard let range = range(of: key) else { return nil }
        return try MessageObject(message: message, range: range, name: memberName(key), maxNesting: maxNesting)
    }

    /// Member `key` as an array of strings, `nil` when absent.
    func strings(_ key: String) throws(MessageProblem) -> [String]? {
        guard let value = try value(key) else { return nil }
        guard case .array(let elements) = value else {
            throw .wrongType(member: memberName(key), expected: .stringArray)
        }
        var strings: [String] = []
        strings.reserveCapacity(elements.count)
        for element in elements {
            guard case .string(let text) = element else {
                throw .wrongType(member: memberName(key), expected: .stringArray)
            }
            strings.append(text)
        }
        return strings
    }

    /// Whether the (validated) value at `range` is an object.
    func isObject(_ range: Range<Int>) -> Bool {
        message[range.lowerBound] == UInt8(ascii: "{")
    }
}
