/// A generic JSON value, for protocol envelopes, query objects and configuration (data goes straight to ``Node``).
///
/// Object members keep their input order; lookups compare keys by code units. Numbers are doubles, as in JSON.parse.
public enum JSONValue: Sendable, Equatable, CustomStringConvertible {
    /// `null`.
    case null
    /// `true` / `false`.
    case bool(Bool)
    /// A finite number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, members in input order.
    case object([(key: String, value: JSONValue)])

    /// The member `key` of an object (the last one if repeated), `nil` when absent or not an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last { CodeUnitOrder.equal($0.key, key) }?.value
    }

    /// The string payload, if this is a string.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The number payload, if this is a number.
    public var numberValue: Double? {
        if case .number(let number) = self { return number }
        return nil
    }

    /// The boolean payload, if this is a boolean.
    public var boolValue: Bool? {
        if case .bool(let flag) = self { return flag }
        return nil
    }

    /// Deep equality with code-unit string comparison and member order taken into account.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return CodeUnitOrder.equal(x, y)
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            return x.count == y.count
                && zip(x, y).allSatisfy { CodeUnitOrder.equal($0.key, $1.key) && $0.value == $1.value }
        default: return false
        }
    }

    /// Compact JSON text.
    public var description: String {
        var writer = JSONWriter()
        writer.write(self)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

extension JSONWriter {
    /// Writes a generic JSON value compactly (members in their stored order).
    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null:
            writeRaw("null".utf8)
        case .bool(let flag):
            writeRaw((flag ? "true" : "false").utf8)
        case .number(let number):
            writeNumber(number)
        case .string(let text):
            writeString(text)
        case .array(let elements):
            writeRaw(CollectionOfOne(UInt8(ascii: "[")))
            for (index, element) in elements.enumerated() {
                if index > 0 { writeRaw(CollectionOfOne(UInt8(ascii: ","))) }
                write(element)
            }
            writeRaw(CollectionOfOne(UInt8(ascii: "]")))
        case .object(let members):
            writeRaw(CollectionOfOne(UInt8(ascii: "{")))
            for (index, member) in members.enumerated() {
                if index > 0 { writeRaw(CollectionOfOne(UInt8(ascii: ","))) }
                writeString(member.key)
                writeRaw(CollectionOfOne(UInt8(ascii: ":")))
                write(member.value)
            }
            writeRaw(CollectionOfOne(UInt8(ascii: "}")))
        }
    }
}
