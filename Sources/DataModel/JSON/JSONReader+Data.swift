extension JSONReader {
    /// Parses written data straight into a ``WriteValue``, applying Firebase's input rules (data-model.md §4.3):
    /// `null`, `{}` and objects of empty children are empty; `{".value":v,".priority":p}` is `v` with priority `p`;
    /// `.priority` sets an object's priority (`null` = none; booleans and objects are invalid); `{".sv":…}` is a
    /// server value (only `.priority` may accompany it); arrays become objects keyed `"0"`, `"1"`, … with `null`
    /// elements skipped; other keys starting with `.` are invalid; a priority on an empty node is dropped.
    ///
    /// - Parameters:
    ///   - bytes: UTF-8 JSON text.
    ///   - depth: depth of the write path; keys may nest at most `limits.maxDepth - depth` levels below it.
    ///   - limits: key, string and depth limits.
    ///   - maxBytes: longest input accepted.
    /// - Throws: ``JSONError``; Firebase rule violations as ``JSONError/Reason/invalidData(_:)``.
    public static func readData(
        _ bytes: UnsafeRawBufferPointer, depth: Int = 0, limits: DataLimits = .default, maxBytes: Int = defaultMaxBytes
    ) throws(JSONError) -> WriteValue {
        guard bytes.count <= maxBytes else { throw JSONError(offset: maxBytes, reason: .inputTooLarge(limit: maxBytes)) }
        var reader = DataReader(scanner: JSONScanner(bytes.bindMemory(to: UInt8.self)), baseDepth: depth, limits: limits)
        let parsed = try reader.readData(level: 0, nesting: 0)
        try reader.scanner.expectEnd()
        switch parsed {
        case .node(let node):
            return WriteValue(node: node, serverValues: reader.placeholders)
        case .serverValue(let value, let priority):
            reader.placeholders.append(ServerValuePlaceholder(path: .root, isPriority: false, value: value))
            return WriteValue(node: Node(.number(0), priority: priority), serverValues: reader.placeholders)
        }
    }

    /// Parses written data from an array of bytes (see ``readData(_:depth:limits:maxBytes:)``).
    public static func readData(
        _ bytes: [UInt8], depth: Int = 0, limits: DataLimits = .default, maxBytes: Int = defaultMaxBytes
    ) throws(JSONError) -> WriteValue {
        try withRawBytes(bytes) { raw throws(JSONError) in
            try readData(raw, depth: depth, limits: limits, maxBytes: maxBytes)
        }
    }
}

/// Recursive-descent reader from bytes to ``Node`` with Firebase's input rules; see
/// ``JSONReader/readData(_:depth:limits:maxBytes:)``.
struct DataReader {
    /// What one JSON value turned into.
    enum Parsed {
        case node(Node)
        case serverValue(ServerValue, priority: Priority?)
    }

    var scanner: JSONScanner
    let baseDepth: Int
    let limits: DataLimits
    /// Containers may nest this deep (`.value`/`.priority` wrappers do not add data levels but do add nesting).
    let maxNesting: Int
    /// Server values found so far, paths relative to the write location.
    var placeholders: [ServerValuePlaceholder] = []
    /// Keys from the write location down to the value being read.
    var path: [Key] = []
    /// Children of the objects being read, innermost last: one growing buffer instead of one growing array per
    /// object, so each finished object is copied once into an exactly sized array (no slack capacity in the tree).
    private var scratch: [ChildEntry] = []

    init(scanner: JSONScanner, baseDepth: Int, limits: DataLimits) {
        self.scanner = scanner
        self.baseDepth = baseDepth
        self.limits = limits
        self.maxNesting = max(JSONReader.defaultMaxNesting, limits.maxDepth * 2)
    }

    private func dataError(_ error: ValueError, at offset: Int) -> JSONError {
        JSONError(offset: offset, reason: .invalidData(error))
    }

    /// Reads one value whose key nests `level` levels below the write location.
    mutating func readData(level: Int, nesting: Int) throws(JSONError) -> Parsed {
        let byte = try scanner.peek()
        switch byte {
        case UInt8(ascii: "\""):
            let start = scanner.index
            let text = try scanner.readString()
            let length = text.utf8.count
            guard length <= limits.maxStringBytes else { throw dataError(.stringTooLong(byteCount: length), at: start) }
            return .node(Node(storage: .string(text)))
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .node(Node(storage: .number(try scanner.readNumber())))
        case UInt8(ascii: "{"):
            guard nesting < maxNesting else { throw scanner.error(.nestingTooDeep(limit: maxNesting)) }
            return try readObject(level: level, nesting: nesting + 1)
        case UInt8(ascii: "["):
            guard nesting < maxNesting else { throw scanner.error(.nestingTooDeep(limit: maxNesting)) }
            return try readArray(level: level, nesting: nesting + 1)
        default:
            switch try scanner.readLiteral() {
            case .some(let flag): return .node(Node(storage: .bool(flag)))
            case .none: return .node(.empty)
            }
        }
    }

    /// Turns a child's parse result into a stored child, recording a server value at its path (`path` still ends
    /// with the child's key).
    private mutating func childNode(_ parsed: Parsed) -> Node {
        switch parsed {
        case .node(let node):
            return node
        case .serverValue(let value, let priority):
            placeholders.append(ServerValuePlaceholder(path: Path(keys: path), isPriority: false, value: value))
            return Node(.number(0), priority: priority)
        }
    }

    private mutating func enter(_ key: Key, level: Int, at offset: Int) throws(JSONError) {
        let depth = baseDepth + level + 1
        guard depth <= limits.maxDepth else { throw dataError(.tooDeep(depth: depth), at: offset) }
        path.append(key)
    }

    private mutating func readArray(level: Int, nesting: Int) throws(JSONError) -> Parsed {
        scanner.index += 1
        let base = scratch.count
        defer { scratch.removeSubrange(base...) }
        if try scanner.peek() == UInt8(ascii: "]") {
            scanner.index += 1
            return .node(.empty)
        }
        var position = 0
        while true {
            let key = Key(unchecked: String(position))
            try enter(key, level: level, at: scanner.index)
            let child = childNode(try readData(level: level + 1, nesting: nesting))
            path.removeLast()
            if !child.isEmpty { scratch.append(ChildEntry(key: key, node: child)) }
            position += 1
            if try JSONReader.endOfContainer(&scanner, close: UInt8(ascii: "]")) { break }
        }
        return .node(Node(sortedChildren: ContiguousArray(scratch[base...]), priority: nil))
    }

    private mutating func readObject(level: Int, nesting: Int) throws(JSONError) -> Parsed {
        let objectStart = scanner.index
        scanner.index += 1
        let base = scratch.count
        defer { scratch.removeSubrange(base...) }
        var priority: Priority?
        var dotValue: Parsed?
        var serverValue: ServerValue?
        var sawDotValue = false
        if try scanner.peek() == UInt8(ascii: "}") {
            scanner.index += 1
            return .node(.empty)
        }
        while true {
            guard try scanner.peek() == UInt8(ascii: "\"") else {
                throw scanner.error(.unexpectedByte(scanner.base[scanner.index]))
            }
            let keyStart = scanner.index
            let name = try scanner.readString()
            try scanner.expect(UInt8(ascii: ":"))
            let valueStart = try skipToValue()
            if name.utf8.first == UInt8(ascii: ".") {
                if CodeUnitOrder.equal(name, ".priority") {
                    priority = try readPriority(nesting: nesting, at: valueStart)
                } else if CodeUnitOrder.equal(name, ".value") {
                    sawDotValue = true
                    dotValue = try readData(level: level, nesting: nesting)
                } else if CodeUnitOrder.equal(name, ".sv") {
                    let payload = try JSONReaderValueBridge.read(&scanner, maxNesting: 4)
                    guard let value = ServerValue(json: payload) else {
                        throw dataError(.unknownServerValue, at: valueStart)
                    }
                    serverValue = value
                } else {
                    throw dataError(.invalidKey(.invalidKey(name)), at: keyStart)
                }
            } else {
                let key = try validatedKey(name, at: keyStart)
                try enter(key, level: level, at: keyStart)
                let child = childNode(try readData(level: level + 1, nesting: nesting))
                path.removeLast()
                if !child.isEmpty { scratch.append(ChildEntry(key: key, node: child)) }
            }
            if try JSONReader.endOfContainer(&scanner, close: UInt8(ascii: "}")) { break }
        }
        if let serverValue {
            guard scratch.count == base && !sawDotValue else { throw dataError(.metadataWithChildren, at: objectStart) }
            return .serverValue(serverValue, priority: priority)
        }
        if sawDotValue {
            guard scratch.count == base else { throw dataError(.metadataWithChildren, at: objectStart) }
            switch dotValue {
            case .node(let node)?: return .node(node.withPriority(priority))
            case .serverValue(let value, _)?: return .serverValue(value, priority: priority)
            case nil: return .node(.empty)
            }
        }
        try Self.sortChildren(&scratch[base...], objectStart: objectStart)
        return .node(Node(sortedChildren: ContiguousArray(scratch[base...]), priority: priority))
    }

    private mutating func skipToValue() throws(JSONError) -> Int {
        _ = try scanner.peek()
        return scanner.index
    }

    private func validatedKey(_ name: String, at offset: Int) throws(JSONError) -> Key {
        let key = Key(unchecked: name)
        if let error = key.string.withUTF8Bytes({ Key.validationError($0, limits: limits) }) {
            throw dataError(.invalidKey(error), at: offset)
        }
        return key
    }

    /// Reads a `.priority` member: null, number, string or a server value (recorded as a priority placeholder).
    private mutating func readPriority(nesting: Int, at offset: Int) throws(JSONError) -> Priority? {
        switch try readData(level: 0, nesting: nesting) {
        case .node(let node):
            if node.isEmpty { return nil }
            switch node.storage {
            case .number(let number): return .number(number)
            case .string(let text): return .string(text)
            default: throw dataError(.invalidPriority, at: offset)
            }
        case .serverValue(let value, _):
            placeholders.append(ServerValuePlaceholder(path: Path(keys: path), isPriority: true, value: value))
            return nil
        }
    }

    /// Sorts children into key order (inputs written by us or by push ids usually already are) and rejects
    /// duplicate keys.
    private static func sortChildren(_ entries: inout ArraySlice<ChildEntry>, objectStart: Int) throws(JSONError) {
        func duplicate(_ key: Key) -> JSONError {
            JSONError(offset: objectStart, reason: .invalidData(.duplicateKey(key.string)))
        }
        var sorted = true
        for index in entries.indices.dropFirst() {
            let order = Key.compare(entries[index - 1].key, entries[index].key)
            if order == 0 { throw duplicate(entries[index].key) }
            if order > 0 {
                sorted = false
                break
            }
        }
        guard !sorted else { return }
        if entries.count <= 16 {
            // Insertion sort through a buffer pointer: typical records have a handful of keys, and the generic sort's
            // closure copies (and retains) both elements on every comparison.
            entries.withUnsafeMutableBufferPointer { buffer in
                for index in 1..<buffer.count {
                    var position = index
                    while position > 0 && Key.compare(buffer[position - 1].key, buffer[position].key) > 0 {
                        buffer.swapAt(position - 1, position)
                        position -= 1
                    }
                }
            }
        } else {
            entries.sort { Key.compare($0.key, $1.key) < 0 }
        }
        for index in entries.indices.dropFirst() where entries[index - 1].key == entries[index].key {
            throw duplicate(entries[index].key)
        }
    }
}

/// Lets the data reader decode small generic values (server-value payloads) with the same scanner.
enum JSONReaderValueBridge {
    static func read(_ scanner: inout JSONScanner, maxNesting: Int) throws(JSONError) -> JSONValue {
        let start = scanner.index
        try scanner.skipValue(nesting: 0, maxNesting: maxNesting)
        let slice = UnsafeRawBufferPointer(start: scanner.base + start, count: scanner.index - start)
        do {
            return try JSONReader.readValue(slice, maxNesting: maxNesting)
        } catch {
            throw JSONError(offset: start + error.offset, reason: error.reason)
        }
    }
}
