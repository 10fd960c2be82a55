import DataModel
import Foundation

/// One pass over an app's value (`[String: Any]`, `[Any]`, `String`, `NSNumber`/`Int`/`Double`/`Bool`,
/// `NSNull`/`nil`) that writes its JSON text and, alongside, tells whether the text is plain data the data model's
/// reader (`JSONReader.readData`) accepts as it is: no key starting with `.` (`.priority`, `.value`, `.sv`), every
/// key valid, no string longer and no key deeper than the data model allows. A plain value's node can then be read
/// from the text later, when something needs it, with nothing to report; any other value is read at once, so that
/// its errors and server values are the reader's.
///
/// Errors of the text itself (a number that is not finite, a type that has no JSON form, nesting past
/// ``maxNesting``) are thrown while writing.
struct ValueWriter {
    /// Nesting beyond which a value is refused before the data model's own depth check (which comes later).
    static let maxNesting = 64

    /// The JSON text written so far.
    private(set) var json = JSONWriter(capacity: 64)
    /// Whether the value written is plain data within the limits (`false` when not checked).
    private(set) var isPlain: Bool
    /// Depth of the write location: keys may nest `limits.maxDepth - baseDepth` levels below it.
    private let baseDepth: Int
    private let limits = DataLimits.default

    /// A writer for a value written at `depth`; `checking: false` writes the text only.
    init(depth: Int, checking: Bool) {
        baseDepth = depth
        isPlain = checking
    }

    /// Writes `value` (the whole value; once).
    mutating func write(_ value: Any?) throws(DatabaseValueError) {
        try write(value, depth: 0)
        if json.bytes.count > JSONReader.defaultMaxBytes { isPlain = false }
    }

    /// Exact-type checks first, then casts: a cast of an `Any` to a class (`NSNumber`, `NSNull`) bridges a Swift
    /// dictionary to an `NSDictionary`, or an `Int` to an `NSNumber`, before it fails, and costs more than the
    /// write.
    private mutating func write(_ value: Any?, depth: Int) throws(DatabaseValueError) {
        guard depth <= Self.maxNesting else { throw DatabaseValueError(description: "the value nests too deep") }
        guard let value else { return json.writeRaw("null".utf8) }
        let kind = type(of: value)
        if kind == String.self, let string = value as? String {
            write(string)
        } else if kind == Int.self, let integer = value as? Int {
            try write(Double(integer))
        } else if kind == [String: Any].self, let object = value as? [String: Any] {
            try write(object, depth: depth)
        } else if kind == Double.self, let double = value as? Double {
            try write(double)
        } else if kind == Bool.self, let flag = value as? Bool {
            json.writeRaw((flag ? "true" : "false").utf8)
        } else if kind == [Any].self, let array = value as? [Any] {
            try write(array, depth: depth)
        } else {
            try writeBridged(value, depth: depth)
        }
    }

    /// The types the exact checks do not catch: Foundation's, other integer and floating types, arrays, and
    /// dictionaries with other key types.
    private mutating func writeBridged(_ value: Any, depth: Int) throws(DatabaseValueError) {
        switch value {
        case is NSNull:
            json.writeRaw("null".utf8)
        case let string as String:
            write(string)
        case let object as [String: Any]:
            try write(object, depth: depth)
        case let array as [Any]:
            try write(array, depth: depth)
        case let number as NSNumber:
            if ValueConversion.isBoolean(number) {
                json.writeRaw((number.boolValue ? "true" : "false").utf8)
            } else {
                try write(number.doubleValue)
            }
        case let object as [AnyHashable: Any]:
            var plain: [String: Any] = [:]
            for (key, child) in object { plain["\(key.base)"] = child }
            try write(plain, depth: depth)
        default:
            throw DatabaseValueError(description: "cannot store a value of type \(type(of: value))")
        }
    }

    private mutating func write(_ string: String) {
        json.writeString(string)
        if isPlain && string.utf8.count > limits.maxStringBytes { isPlain = false }
    }

    private mutating func write(_ number: Double) throws(DatabaseValueError) {
        guard number.isFinite else { throw DatabaseValueError(description: "numbers must be finite, not \(number)") }
        json.writeNumber(number)
    }

    private mutating func write(_ object: [String: Any], depth: Int) throws(DatabaseValueError) {
        json.writeRaw("{".utf8)
        if isPlain && !object.isEmpty && !fitsBelow(depth: depth) { isPlain = false }
        var first = true
        for (name, child) in object {
            if !first { json.writeRaw(",".utf8) }
            first = false
            json.writeString(name)
            json.writeRaw(":".utf8)
            if isPlain && !Self.isPlainKey(name) { isPlain = false }
            try write(child, depth: depth + 1)
        }
        json.writeRaw("}".utf8)
    }

    private mutating func write(_ array: [Any], depth: Int) throws(DatabaseValueError) {
        json.writeRaw("[".utf8)
        if isPlain && !array.isEmpty && !fitsBelow(depth: depth) { isPlain = false }
        for (index, child) in array.enumerated() {
            if index > 0 { json.writeRaw(",".utf8) }
            try write(child, depth: depth + 1)
        }
        json.writeRaw("]".utf8)
    }

    /// Whether `name` is a key the reader takes as a child's (not metadata, and valid).
    private static func isPlainKey(_ name: String) -> Bool {
        name.utf8.first != UInt8(ascii: ".") && (try? Key(name)) != nil
    }

    /// Whether a child of the container at `depth` is within the data model's depth limit.
    private func fitsBelow(depth: Int) -> Bool {
        baseDepth + depth + 1 <= limits.maxDepth
    }
}
