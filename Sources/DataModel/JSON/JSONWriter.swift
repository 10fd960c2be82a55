/// Serializes nodes and JSON values to compact UTF-8 JSON, byte-identical to `JSON.stringify` in the Firebase JS
/// SDK for the same value: numbers as ``JSONNumberFormatter`` prints them; strings escaped exactly like
/// `JSON.stringify` (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other controls as lowercase `\u00xx`; everything
/// else, including U+007F, U+2028 and non-ASCII, as raw UTF-8); no whitespace.
///
/// Object members are written in Firebase key order (§7.1), with `.priority` last and `.value` first, as the SDK's
/// `exportVal()` builds them. (JavaScript objects would additionally hoist array-index keys; clients do not depend on
/// member order.)
public struct JSONWriter {
    /// The output so far.
    public private(set) var bytes: [UInt8]

    /// A writer with `capacity` bytes reserved.
    public init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    // MARK: - Nodes

    /// Writes `node` in Firebase export format (data-model.md §4.2): priorities as `.priority`, prioritized leaves
    /// as `{".value":v,".priority":p}`, the empty node as `null`. This is what data pushes, `g` results and REST
    /// `format=export` carry.
    public mutating func writeExport(_ node: Node) {
        switch node.storage {
        case .empty:
            append("null")
        case .bool, .number, .string:
            writeLeaf(node)
        case .children(let map):
            writeChildren(map, priority: nil, export: true)
        case .record(let record):
            writeRecord(record, priority: nil, plainArrays: nil)
        case .prioritized(let box):
            switch box.content.storage {
            case .children(let map):
                writeChildren(map, priority: box.priority, export: true)
            case .record(let record):
                writeRecord(record, priority: box.priority, plainArrays: nil)
            default:
                append("{\".value\":")
                writeLeaf(box.content)
                append(",\".priority\":")
                writePriority(box.priority)
                bytes.append(UInt8(ascii: "}"))
            }
        }
    }

    /// Writes `node` as plain JSON (what `DataSnapshot.val()` and a REST `GET` return): no priorities, no `.value`
    /// wrappers; with `arrays`, objects whose keys are all canonical non-negative integers and fill more than half of
    /// `0...maxKey` are written as arrays with `null` holes (§5).
    public mutating func writePlain(_ node: Node, arrays: Bool = true) {
        switch node.storage {
        case .empty:
            append("null")
        case .bool, .number, .string:
            writeLeaf(node)
        case .record(let record):
            if arrays, let length = Self.arrayLength(ChildMap(sorted: record.entries())) {
                writeArray(ChildMap(sorted: record.entries()), length: length)
            } else {
                writeRecord(record, priority: nil, plainArrays: arrays)
            }
        case .children(let map):
            if arrays, let length = Self.arrayLength(map) {
                writeArray(map, length: length)
            } else {
                writeChildren(map, priority: nil, export: false, arrays: arrays)
            }
        case .prioritized(let box):
            writePlain(box.content, arrays: arrays)
        }
    }

    private mutating func writeLeaf(_ node: Node) {
        switch node.storage {
        case .bool(let flag): append(flag ? "true" : "false")
        case .number(let number): JSONNumberFormatter.append(number, to: &bytes)
        case .string(let text): writeString(text)
        case .empty, .children, .record, .prioritized: append("null")
        }
    }

    private mutating func writePriority(_ priority: Priority) {
        switch priority {
        case .number(let number): JSONNumberFormatter.append(number, to: &bytes)
        case .string(let text): writeString(text)
        }
    }

    /// Writes a priority as its JSON value, `null` for none (REST's `/.priority` locations).
    public mutating func writePriorityValue(_ priority: Priority?) {
        guard let priority else {
            append("null")
            return
        }
        writePriority(priority)
    }

    private mutating func writeChildren(_ map: ChildMap, priority: Priority?, export: Bool, arrays: Bool = false) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for entry in map {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            writeString(entry.key.string)
            bytes.append(UInt8(ascii: ":"))
            if export { writeExport(entry.node) } else { writePlain(entry.node, arrays: arrays) }
        }
        if let priority {
            append(",\".priority\":")
            writePriority(priority)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Writes a packed record straight from its bytes; its leaves read the same in export and plain form, nested
    /// records are written in export form when `plainArrays` is `nil`, else plain (with that array rule).
    private mutating func writeRecord(_ record: LeafRecord, priority: Priority?, plainArrays: Bool?) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        record.forEach { key, value in
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            writeString(utf8: key)
            bytes.append(UInt8(ascii: ":"))
            switch value {
            case .bool(let flag): append(flag ? "true" : "false")
            case .number(let number): JSONNumberFormatter.append(number, to: &bytes)
            case .string(let text): writeString(utf8: text)
            case .record:
                if let arrays = plainArrays {
                    writePlain(LeafRecord.node(value), arrays: arrays)
                } else {
                    writeExport(LeafRecord.node(value))
                }
            }
            return true
        }
        if let priority {
            append(",\".priority\":")
            writePriority(priority)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// The array length when `map` renders as an array under the SDK rule (`^(0|[1-9]\d*)$` keys,
    /// maxKey < 2 × count), else `nil`.
    static func arrayLength(_ map: ChildMap) -> Int? {
        let count = map.count
        var maxKey = -1
        for entry in map {
            guard let index = canonicalIndex(entry.key) else { return nil }
            maxKey = max(maxKey, index)
        }
        return maxKey < 2 * count ? maxKey + 1 : nil
    }

    /// The value of a key written as a canonical non-negative integer (no sign, no leading zero), if it is one and
    /// fits comfortably in an `Int`.
    private static func canonicalIndex(_ key: Key) -> Int? {
        key.string.withUTF8Bytes { bytes -> Int? in
            guard !bytes.isEmpty, bytes.count <= 15 else { return nil }
            if bytes.count > 1 && bytes[0] == UInt8(ascii: "0") { return nil }
            var value = 0
            for byte in bytes {
                let digit = byte &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int(digit)
            }
            return value
        }
    }

    private mutating func writeArray(_ map: ChildMap, length: Int) {
        bytes.append(UInt8(ascii: "["))
        var next = 0
        for entry in map {
            guard let index = Self.canonicalIndex(entry.key) else { continue }
            while next < index {
                append(next == 0 ? "null" : ",null")
                next += 1
            }
            if next > 0 { bytes.append(UInt8(ascii: ",")) }
            writePlain(entry.node, arrays: true)
            next += 1
        }
        while next < length {
            append(next == 0 ? "null" : ",null")
            next += 1
        }
        bytes.append(UInt8(ascii: "]"))
    }

    // MARK: - Scalars

    /// Writes a number as JavaScript prints it; `value` must be finite.
    public mutating func writeNumber(_ value: Double) {
        JSONNumberFormatter.append(value, to: &bytes)
    }

    /// Writes a string literal escaped as `JSON.stringify` does.
    public mutating func writeString(_ text: String) {
        text.withUTF8Bytes { writeString(utf8: $0) }
    }

    /// Writes a string literal from valid UTF-8 bytes, escaped as `JSON.stringify` does.
    mutating func writeString(utf8 source: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        var runStart = 0
        for index in 0..<source.count {
            let byte = source[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[runStart..<index]))
            runStart = index + 1
            switch byte {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case 0x08: append("\\b")
            case 0x0C: append("\\f")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            default:
                append("\\u00")
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            }
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[runStart...]))
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends raw bytes (already valid JSON) to the output.
    public mutating func writeRaw(_ raw: some Sequence<UInt8>) {
        bytes.append(contentsOf: raw)
    }

    /// Appends ASCII text.
    private mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }
}

extension Node: CustomStringConvertible {
    /// The node in export format as compact JSON.
    public var exportJSON: [UInt8] {
        var writer = JSONWriter()
        writer.writeExport(self)
        return writer.bytes
    }

    /// The node in export format as a string (for logs and tests).
    public var description: String {
        String(decoding: exportJSON, as: UTF8.self)
    }
}
