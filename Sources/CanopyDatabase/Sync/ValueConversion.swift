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
        try readBack(jsonBytes(value), depth: depth)
    }

    /// `value` as the JSON text a set sends, checked in the same pass (``ValueWriter``): `value` is `nil` when the
    /// text is plain data, whose node is read when something needs it (``LocalValue``), else the data read from
    /// the text at once (metadata, server values), or the reader's error.
    static func checkedJSON(_ value: Any?, depth: Int) throws(DatabaseValueError)
        -> (json: [UInt8], value: WriteValue?)
    {
        var writer = ValueWriter(depth: depth, checking: true)
        try writer.write(value)
        let json = writer.json.bytes
        return (json, writer.isPlain ? nil : try readBack(json, depth: depth))
    }

    /// The data of JSON text `json` written at `depth`, by the data model's reader.
    static func readBack(_ json: [UInt8], depth: Int) throws(DatabaseValueError) -> WriteValue {
        do {
            return try JSONReader.readData(json, depth: depth)
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
        var writer = ValueWriter(depth: 0, checking: false)
        try writer.write(value)
        return writer.json.bytes
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
