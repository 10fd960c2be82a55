import DataModel

/// The compact binary form of nodes, paths and priorities used in journal records and snapshots.
///
/// ```
/// node     = tag [priority] body
/// tag      = 0 empty | 1 false | 2 true | 3 number | 4 string | 5 object, plus 0x80 when a priority follows
/// priority = 0 UInt64(double bits) | 1 string
/// number   = UInt64 LE of the IEEE-754 bits          string = varint(byte count) UTF-8
/// object   = varint(child count) (key node)*, keys in key order
/// path     = varint(segment count) key*               key    = string
/// ```
///
/// Rejected alternative: JSON export format, which is what `canopy export` writes. Decoding binary skips number
/// parsing and string unescaping and is several times faster, which is what start-up time depends on.
enum NodeCodec {
    /// Deepest nesting accepted when decoding (paths and data are limited to 32 levels; the rest is headroom).
    static let maxDepth = 128

    private static let priorityFlag: UInt8 = 0x80

    // MARK: - Encoding

    static func encode(_ node: Node, into writer: inout BinaryWriter) {
        let priority = node.priority
        let flag = priority == nil ? 0 : priorityFlag
        if let leaf = node.leafValue {
            switch leaf {
            case .bool(let value): writer.write((value ? 2 : 1) | flag)
            case .number: writer.write(3 | flag)
            case .string: writer.write(4 | flag)
            }
            if let priority { encode(priority, into: &writer) }
            switch leaf {
            case .bool: break
            case .number(let value): writer.writeUInt64(value.bitPattern)
            case .string(let value): writer.writeString(value)
            }
        } else if node.hasChildren {
            writer.write(5 | flag)
            if let priority { encode(priority, into: &writer) }
            writer.writeVarint(node.childCount)
            for entry in node.children {
                writer.writeString(entry.key.string)
                encode(entry.node, into: &writer)
                writer.entryBoundary()
            }
        } else {
            writer.write(0)
        }
    }

    static func encode(_ priority: Priority, into writer: inout BinaryWriter) {
        switch priority {
        case .number(let value):
            writer.write(0)
            writer.writeUInt64(value.bitPattern)
        case .string(let value):
            writer.write(1)
            writer.writeString(value)
        }
    }

    static func encode(_ path: Path, into writer: inout BinaryWriter) {
        writer.writeVarint(path.depth)
        for key in path.keys { writer.writeString(key.string) }
    }

    // MARK: - Decoding

    static func decodeNode(from reader: inout BinaryReader, depth: Int = 0) throws(BinaryDecodingError) -> Node {
        guard depth <= maxDepth else { throw reader.failure("nesting deeper than \(maxDepth)") }
        let tag = try reader.readByte()
        let priority = tag & priorityFlag != 0 ? try decodePriority(from: &reader) : nil
        switch tag & ~priorityFlag {
        case 0:
            guard priority == nil else { throw reader.failure("empty node with a priority") }
            return .empty
        case 1: return Node(.bool(false), priority: priority)
        case 2: return Node(.bool(true), priority: priority)
        case 3: return Node(.number(try decodeFiniteNumber(from: &reader)), priority: priority)
        case 4: return Node(.string(try reader.readString()), priority: priority)
        case 5:
            // Each child takes at least 3 bytes (key length, key, tag), which bounds the reservation below.
            let count = try reader.readCount(limit: reader.remainingCount / 3)
            guard count > 0 else { throw reader.failure("object without children") }
            var children = ContiguousArray<ChildEntry>()
            children.reserveCapacity(count)  // exact: the array is kept as the node's storage
            for _ in 0..<count {
                let key = try decodeKey(from: &reader)
                let child = try decodeNode(from: &reader, depth: depth + 1)
                guard !child.isEmpty else { throw reader.failure("empty child") }
                children.append(ChildEntry(key: key, node: child))
                reader.releaseConsumedBytes()
            }
            // The encoder wrote the children in key order and the file's checksum vouches for the bytes, so the
            // order is neither re-checked nor re-sorted (``Node/init(sortedChildren:priority:)``).
            return Node(sortedChildren: children, priority: priority)
        default:
            throw reader.failure("unknown node tag \(tag)")
        }
    }

    static func decodePriority(from reader: inout BinaryReader) throws(BinaryDecodingError) -> Priority {
        switch try reader.readByte() {
        case 0: return .number(try decodeFiniteNumber(from: &reader))
        case 1: return .string(try reader.readString())
        default: throw reader.failure("unknown priority tag")
        }
    }

    static func decodePath(from reader: inout BinaryReader) throws(BinaryDecodingError) -> Path {
        let count = try reader.readCount(limit: maxDepth)
        var keys: [Key] = []
        keys.reserveCapacity(count)
        for _ in 0..<count { keys.append(try decodeKey(from: &reader)) }
        return Path(keys: keys)
    }

    private static func decodeKey(from reader: inout BinaryReader) throws(BinaryDecodingError) -> Key {
        let text = try reader.readString()
        guard !text.isEmpty else { throw reader.failure("empty key") }
        // Written from validated keys and checksummed; the forbidden-character scan is not repeated.
        return Key(trusted: text)
    }

    private static func decodeFiniteNumber(from reader: inout BinaryReader) throws(BinaryDecodingError) -> Double {
        let value = Double(bitPattern: try reader.readUInt64())
        guard value.isFinite else { throw reader.failure("non-finite number") }
        return value
    }
}
