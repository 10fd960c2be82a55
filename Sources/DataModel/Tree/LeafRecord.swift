/// Compact, immutable storage for a small object whose children are all leaves or packed records, none with a
/// priority — the typical Firebase record (`{"text":"…","uid":"…","timestamp":…,"tags":{"a":true}}`).
///
/// Why: stored as a general object, such a record costs an array header plus 40 bytes per child, and every string
/// over 15 bytes a separate allocation with a 32-byte header; a 100 MB import then needs about 3.5× its size in
/// memory. Packed here, keys and values share one allocation: about 1.1–1.5× the record's JSON size.
///
/// Layout of the bytes, children in key order: key length (1 byte), key (UTF-8), tag (1 byte: 0 false, 1 true,
/// 2 number, 3 string, 4 record), then 8 bytes of IEEE-754 bits (little-endian) for numbers, a 2-byte little-endian
/// length and the UTF-8 bytes for strings, or the child count (1 byte), a 2-byte little-endian length and the packed
/// bytes for a nested record. Lookups scan linearly (at most ``maxChildren`` children). Nesting keeps a record with
/// a small sub-object (`"tags":{…}`) in one allocation instead of an array of entries plus a second record; reading
/// the nested child copies its bytes into a record of its own.
///
/// Records are produced when an object is built from sorted entries (JSON reading, ``Node/init(children:priority:)``)
/// and never mutated: writing into one converts it to the general form first (``Node/modifyChild(_:_:)``).
/// Rejected alternative: packing every object (including nested ones) into a byte tree — smaller still, but every
/// write inside it would re-encode its whole subtree.
struct LeafRecord: @unchecked Sendable {
    // The buffer is immutable after `make`, hence shareable across queues (ManagedBuffer itself cannot be Sendable).

    /// The packed bytes, with the child count and encoded size in the header.
    final class Buffer: ManagedBuffer<Header, UInt8> {}

    /// Child count and encoded size.
    struct Header {
        var count: Int32
        var byteCount: Int32
    }

    /// The storage.
    let buffer: Buffer

    /// Most children a record holds.
    static let maxChildren = 16
    /// Largest encoded size; bigger objects keep the general form (and big strings their own storage).
    static let maxBytes = 2048

    private enum Tag {
        static let `false`: UInt8 = 0
        static let `true`: UInt8 = 1
        static let number: UInt8 = 2
        static let string: UInt8 = 3
        static let record: UInt8 = 4
    }

    /// A leaf value as stored in the record; string bytes point into the record.
    enum Value {
        case bool(Bool)
        case number(Double)
        case string(UnsafeBufferPointer<UInt8>)
        /// A nested record: its child count and packed bytes.
        case record(count: Int, bytes: UnsafeBufferPointer<UInt8>)
    }

    /// Packs `entries` (sorted by key, non-empty nodes) when they qualify, else returns `nil`.
    static func make(_ entries: ContiguousArray<ChildEntry>) -> LeafRecord? {
        guard !entries.isEmpty && entries.count <= maxChildren else { return nil }
        var size = 0
        for entry in entries {
            let keyCount = entry.key.utf8Count
            guard keyCount <= 255 else { return nil }
            size += 2 + keyCount
            switch entry.node.storage {
            case .bool: break
            case .number: size += 8
            case .string(let text): size += 2 + text.utf8.count
            case .record(let nested): size += 3 + nested.byteCount
            case .empty, .children, .prioritized: return nil
            }
            if size > maxBytes { return nil }
        }
        let created = Buffer.create(minimumCapacity: size) { _ in Header(count: Int32(entries.count), byteCount: Int32(size)) }
        let record = LeafRecord(buffer: unsafeDowncast(created, to: Buffer.self))
        record.buffer.withUnsafeMutablePointerToElements { base in
            var offset = 0
            func append(_ bytes: UnsafeBufferPointer<UInt8>) {
                if let source = bytes.baseAddress, bytes.count > 0 { (base + offset).update(from: source, count: bytes.count) }
                offset += bytes.count
            }
            func appendByte(_ byte: UInt8) {
                base[offset] = byte
                offset += 1
            }
            for entry in entries {
                entry.key.string.withUTF8Bytes { key in
                    appendByte(UInt8(key.count))
                    append(key)
                }
                switch entry.node.storage {
                case .bool(let flag):
                    appendByte(flag ? Tag.true : Tag.false)
                case .number(let number):
                    appendByte(Tag.number)
                    withUnsafeBytes(of: number.bitPattern.littleEndian) { append($0.bindMemory(to: UInt8.self)) }
                case .string(let text):
                    appendByte(Tag.string)
                    text.withUTF8Bytes { bytes in
                        withUnsafeBytes(of: UInt16(bytes.count).littleEndian) { append($0.bindMemory(to: UInt8.self)) }
                        append(bytes)
                    }
                case .record(let nested):
                    appendByte(Tag.record)
                    appendByte(UInt8(nested.count))
                    withUnsafeBytes(of: UInt16(nested.byteCount).littleEndian) { append($0.bindMemory(to: UInt8.self)) }
                    nested.buffer.withUnsafeMutablePointerToElements { source in
                        append(UnsafeBufferPointer(start: source, count: nested.byteCount))
                    }
                case .empty, .children, .prioritized:
                    break
                }
            }
        }
        return record
    }

    /// Number of children.
    var count: Int { Int(header.count) }

    /// Size of the packed bytes.
    var byteCount: Int { Int(header.byteCount) }

    /// The header, read through its pointer: `ManagedBuffer.header` is a class property, whose every read costs
    /// a dynamic exclusivity check.
    private var header: Header { buffer.withUnsafeMutablePointerToHeader { $0.pointee } }

    /// Wraps packed storage.
    init(buffer: Buffer) {
        self.buffer = buffer
    }

    /// A record holding a copy of `bytes`, the packed form of `count` children (a nested record's value).
    init(copying bytes: UnsafeBufferPointer<UInt8>, count: Int) {
        let created = Buffer.create(minimumCapacity: bytes.count) { _ in
            Header(count: Int32(count), byteCount: Int32(bytes.count))
        }
        buffer = unsafeDowncast(created, to: Buffer.self)
        if let source = bytes.baseAddress, bytes.count > 0 {
            buffer.withUnsafeMutablePointerToElements { $0.update(from: source, count: bytes.count) }
        }
    }

    /// Levels of objects: 1, plus the deepest nested record.
    var depth: Int {
        var deepest = 0
        forEach { _, value in
            if case .record(let count, let bytes) = value {
                deepest = Swift.max(deepest, LeafRecord(copying: bytes, count: count).depth)
            }
            return true
        }
        return 1 + deepest
    }

    /// Calls `body` with each child's key bytes and value, in key order, until it returns `false`.
    func forEach(_ body: (UnsafeBufferPointer<UInt8>, Value) -> Bool) {
        let byteCount = self.byteCount
        buffer.withUnsafeMutablePointerToElements { mutableBase in
            let base = UnsafePointer(mutableBase)
            var offset = 0
            while offset < byteCount {
                let keyCount = Int(base[offset])
                let key = UnsafeBufferPointer(start: base + offset + 1, count: keyCount)
                let (value, next) = Self.value(base, at: offset + 1 + keyCount)
                offset = next
                if !body(key, value) { return }
            }
        }
    }

    /// Decodes the value whose tag is at `offset` (just after its key); returns it and the offset of the next child.
    @inline(__always)
    private static func value(_ base: UnsafePointer<UInt8>, at tagOffset: Int) -> (Value, next: Int) {
        let tag = base[tagOffset]
        let offset = tagOffset + 1
        switch tag {
        case Tag.false, Tag.true:
            return (.bool(tag == Tag.true), offset)
        case Tag.number:
            let bits = UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self)
            return (.number(Double(bitPattern: UInt64(littleEndian: bits))), offset + 8)
        case Tag.record:
            let count = Int(base[offset])
            let length = Int(UInt16(littleEndian: UnsafeRawPointer(base + offset + 1).loadUnaligned(as: UInt16.self)))
            return (.record(count: count, bytes: UnsafeBufferPointer(start: base + offset + 3, count: length)), offset + 3 + length)
        default:
            let length = Int(UInt16(littleEndian: UnsafeRawPointer(base + offset).loadUnaligned(as: UInt16.self)))
            return (.string(UnsafeBufferPointer(start: base + offset + 2, count: length)), offset + 2 + length)
        }
    }

    /// The node for a stored value.
    static func node(_ value: Value) -> Node {
        switch value {
        case .bool(let flag): return Node(storage: .bool(flag))
        case .number(let number): return Node(storage: .number(number))
        case .string(let bytes): return Node(storage: .string(String(decoding: bytes, as: UTF8.self)))
        case .record(let count, let bytes): return Node(storage: .record(LeafRecord(copying: bytes, count: count)))
        }
    }

    /// The child with `key`, if present.
    ///
    /// Scans the keys in one pass over the bytes (at most ``maxChildren``), comparing lengths first.
    func child(_ key: Key) -> Node? {
        buffer.withUnsafeMutablePointerToElements { mutableBase in
            let base = UnsafePointer(mutableBase)
            return valueOffset(of: key, in: base).map { LeafRecord.node(Self.value(base, at: $0).0) }
        }
    }

    /// Whether there is a child with `key` (without building its node).
    func hasChild(_ key: Key) -> Bool {
        buffer.withUnsafeMutablePointerToElements { valueOffset(of: key, in: UnsafePointer($0)) != nil }
    }

    /// The offset of the tag of the child with `key` in the packed bytes at `base`, or `nil` when there is none.
    private func valueOffset(of key: Key, in base: UnsafePointer<UInt8>) -> Int? {
        let byteCount = self.byteCount
        return key.string.withUTF8Bytes { wanted in
            var offset = 0
            while offset < byteCount {
                let keyCount = Int(base[offset])
                let tagOffset = offset + 1 + keyCount
                if keyCount == wanted.count
                    && CodeUnitOrder.equal(UnsafeBufferPointer(start: base + offset + 1, count: keyCount), wanted)
                {
                    return tagOffset
                }
                offset = Self.end(base, at: tagOffset)
            }
            return nil
        }
    }

    /// The offset just after the value whose tag is at `tagOffset` (the next child's key length).
    @inline(__always)
    private static func end(_ base: UnsafePointer<UInt8>, at tagOffset: Int) -> Int {
        let offset = tagOffset + 1
        switch base[tagOffset] {
        case Tag.false, Tag.true: return offset
        case Tag.number: return offset + 8
        case Tag.record:
            return offset + 3 + Int(UInt16(littleEndian: UnsafeRawPointer(base + offset + 1).loadUnaligned(as: UInt16.self)))
        default:
            return offset + 2 + Int(UInt16(littleEndian: UnsafeRawPointer(base + offset).loadUnaligned(as: UInt16.self)))
        }
    }

    /// All children as general entries (for writes and rank queries).
    func entries() -> ContiguousArray<ChildEntry> {
        var result = ContiguousArray<ChildEntry>()
        result.reserveCapacity(count)
        forEach { name, value in
            result.append(ChildEntry(key: Key(unchecked: String(decoding: name, as: UTF8.self)), node: LeafRecord.node(value)))
            return true
        }
        return result
    }

    /// Whether two records hold the same bytes.
    func hasSameBytes(as other: LeafRecord) -> Bool {
        if buffer === other.buffer { return true }
        let count = byteCount
        guard count == other.byteCount else { return false }
        return buffer.withUnsafeMutablePointerToElements { left in
            other.buffer.withUnsafeMutablePointerToElements { right in
                CodeUnitOrder.compare(
                    UnsafeBufferPointer(start: left, count: count), UnsafeBufferPointer(start: right, count: count)) == 0
            }
        }
    }
}
