import DataModel

extension JSONWriter {
    /// Writes ASCII punctuation or a literal (`{`, `}`, `,`, `null`).
    mutating func writeASCII(_ text: StaticString) {
        text.withUTF8Buffer { writeRaw($0) }
    }

    /// Writes `"key":`, preceded by `,` unless `first`.
    mutating func writeKey(_ key: String, first: Bool = false) {
        if !first { writeASCII(",") }
        writeString(key)
        writeASCII(":")
    }

    /// Writes an integer (request numbers, tags, timestamps); exact up to 2^53, as JSON numbers are for clients.
    mutating func writeInteger(_ value: Int) {
        writeNumber(Double(value))
    }

    /// Opens an envelope `{"t":LAYER,"d":` (wire-protocol.md §3.1); close it with ``closeObject()``.
    mutating func openEnvelope(layer: String) {
        writeASCII("{")
        writeKey(WireKey.layer, first: true)
        writeString(layer)
        writeKey(WireKey.payload)
    }

    /// Writes `}`.
    mutating func closeObject() {
        writeASCII("}")
    }

    /// Writes a path in canonical text form (`"/"`, `"/a/b"`), which every SDK accepts.
    ///
    /// Keys cannot hold control characters, so only `"` and `\` would need escaping; paths without them (nearly
    /// all) are copied key by key without building the path's text first.
    mutating func writePath(_ path: Path) {
        let plain = path.keys.allSatisfy { key in
            !key.string.utf8.contains { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
        }
        guard plain, !path.isRoot else {
            writeString(path.description)
            return
        }
        writeASCII("\"")
        for key in path.keys {
            writeASCII("/")
            writeRaw(key.string.utf8)
        }
        writeASCII("\"")
    }

    /// Writes a write target relative to a merge's path: `"a/b"`, `"a/b/.priority"`, `".priority"`.
    mutating func writeRelativeTarget(_ target: WriteTarget) {
        switch target {
        case .node(let path):
            writeString(path.keys.map(\.string).joined(separator: "/"))
        case .priority(of: let path):
            let keys = path.keys.map(\.string) + [WriteTarget.prioritySegment]
            writeString(keys.joined(separator: "/"))
        }
    }
}
