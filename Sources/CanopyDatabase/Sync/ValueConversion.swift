import DataModel
import Foundation

/// Why a value cannot be written.
public struct DatabaseValueError: Error, Sendable, CustomStringConvertible {
    /// What is wrong with the value.
    public let description: String
}

/// Values as the SDK's API takes and gives them (`[String: Any]`, `[Any]`, `String`, `NSNumber`/`Int`/`Double`/
/// `Bool`, `NSNull`/`nil`), and the data model's nodes.
enum ValueConversion {
    /// `value` as data to write (with `{".sv": …}` server values and `.priority`/`.value` keys), checked against
    /// the data model's limits at `depth`.
    static func writeValue(_ value: Any?, depth: Int = 0) throws(DatabaseValueError) -> WriteValue {
        try writeValueAndJSON(value, depth: depth).value
    }

    /// ``writeValue(_:depth:)`` with the JSON text it was read from (valid, as the reading showed), for a request
    /// that carries it as it is.
    static func writeValueAndJSON(_ value: Any?, depth: Int = 0) throws(DatabaseValueError)
        -> (value: WriteValue, json: [UInt8])
    {
        let json = try jsonBytes(value)
        do {
            return (try JSONReader.readData(json, depth: depth), json)
        } catch {
            throw DatabaseValueError(description: "invalid data: \(error)")
        }
    }

    /// Whether `value` is a boolean: a Swift `Bool`, or an `NSNumber` made from one. On Linux `NSNumber(1) as? Bool`
    /// succeeds too, so the check is on the number's type (`c`), never on the cast.
    static func isBoolean(_ value: Any) -> Bool {
        if type(of: value) == Bool.self { return true }
        if let number = value as? NSNumber { return String(cString: number.objCType) == "c" }
        return false
    }

    /// `value` as JSON text, written directly (Foundation's JSONSerialization bridges every value through
    /// `NSObject`s and took most of a write's time).
    static func jsonBytes(_ value: Any?) throws(DatabaseValueError) -> [UInt8] {
        var writer = JSONWriter(capacity: 64)
        try write(value, into: &writer, depth: 0)
        return writer.bytes
    }

    /// Nesting beyond which a value is refused before the data model's own depth check (which comes later).
    private static let maxNesting = 64

    /// Exact-type checks first, then casts: a cast of an `Any` to a class (`NSNumber`, `NSNull`) bridges a Swift
    /// dictionary to an `NSDictionary`, or an `Int` to an `NSNumber`, before it fails, and costs more than the
    /// write.
    private static func write(_ value: Any?, into writer: inout JSONWriter, depth: Int) throws(DatabaseValueError) {
        guard depth <= maxNesting else { throw DatabaseValueError(description: "the value nests too deep") }
        guard let value else { return writer.writeRaw("null".utf8) }
        let kind = type(of: value)
        if kind == String.self, let string = value as? String {
            writer.writeString(string)
        } else if kind == Int.self, let integer = value as? Int {
            try writeNumber(Double(integer), into: &writer)
        } else if kind == [String: Any].self, let object = value as? [String: Any] {
            try write(object, into: &writer, depth: depth)
        } else if kind == Double.self, let double = value as? Double {
            try writeNumber(double, into: &writer)
        } else if kind == Bool.self, let flag = value as? Bool {
            writer.writeRaw((flag ? "true" : "false").utf8)
        } else if kind == [Any].self, let array = value as? [Any] {
            try write(array, into: &writer, depth: depth)
        } else {
            try writeBridged(value, into: &writer, depth: depth)
        }
    }

    private static func write(_ object: [String: Any], into writer: inout JSONWriter, depth: Int)
        throws(DatabaseValueError)
    {
        writer.writeRaw("{".utf8)
        var first = true
        for (key, child) in object {
            if !first { writer.writeRaw(",".utf8) }
            first = false
            writer.writeString(key)
            writer.writeRaw(":".utf8)
            try write(child, into: &writer, depth: depth + 1)
        }
        writer.writeRaw("}".utf8)
    }

    private static func write(_ array: [Any], into writer: inout JSONWriter, depth: Int) throws(DatabaseValueError) {
        writer.writeRaw("[".utf8)
        for (index, child) in array.enumerated() {
            if index > 0 { writer.writeRaw(",".utf8) }
            try write(child, into: &writer, depth: depth + 1)
        }
        writer.writeRaw("]".utf8)
    }

    /// The types the exact checks do not catch: Foundation's, other integer and floating types, arrays, and
    /// dictionaries with other key types.
    private static func writeBridged(_ value: Any, into writer: inout JSONWriter, depth: Int)
        throws(DatabaseValueError)
    {
        switch value {
        case is NSNull:
            writer.writeRaw("null".utf8)
        case let string as String:
            writer.writeString(string)
        case let object as [String: Any]:
            try write(object, into: &writer, depth: depth)
        case let array as [Any]:
            try write(array, into: &writer, depth: depth)
        case let number as NSNumber:
            if isBoolean(number) {
                writer.writeRaw((number.boolValue ? "true" : "false").utf8)
            } else {
                try writeNumber(number.doubleValue, into: &writer)
            }
        case let object as [AnyHashable: Any]:
            var plain: [String: Any] = [:]
            for (key, child) in object { plain["\(key.base)"] = child }
            try write(plain, into: &writer, depth: depth)
        default:
            throw DatabaseValueError(description: "cannot store a value of type \(type(of: value))")
        }
    }

    private static func writeNumber(_ number: Double, into writer: inout JSONWriter) throws(DatabaseValueError) {
        guard number.isFinite else { throw DatabaseValueError(description: "numbers must be finite, not \(number)") }
        writer.writeNumber(number)
    }

    /// The SDK's value of `node`: `nil` when empty; objects whose keys are all small integers become arrays (as
    /// the SDKs convert them: every key an integer and the largest below twice the count), with `NSNull` holes.
    static func value(of node: Node, exportPriority: Bool = false) -> Any? {
        if node.isEmpty { return nil }
        if let leaf = node.leafValue {
            let plain: Any
            switch leaf {
            case .bool(let bool): plain = bool
            case .string(let string): plain = string
            case .number(let number):
                plain = number.rounded() == number && abs(number) < 9.007_199_254_740_992e15
                    ? NSNumber(value: Int64(number)) : NSNumber(value: number)
            }
            guard exportPriority, let priority = node.priority else { return plain }
            return [".value": plain, ".priority": self.value(of: priority)]
        }
        var object = [String: Any](minimumCapacity: node.childCount)
        var integerKeys = true
        var largest = -1
        for entry in node.children {
            object[entry.key.string] = value(of: entry.node, exportPriority: exportPriority)
            if let integer = entry.key.integerValue, integer >= 0 {
                largest = max(largest, Int(integer))
            } else {
                integerKeys = false
            }
        }
        if exportPriority, let priority = node.priority { object[".priority"] = value(of: priority) }
        if integerKeys, !exportPriority || node.priority == nil, largest < 2 * object.count {
            return (0...largest).map { object[String($0)] ?? NSNull() }
        }
        return object
    }

    /// The SDK's value of a priority: a string or a number.
    static func value(of priority: Priority) -> Any {
        switch priority {
        case .string(let string): return string
        case .number(let number): return NSNumber(value: number)
        }
    }
}
