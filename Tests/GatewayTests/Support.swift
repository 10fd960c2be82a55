import DataModel
@testable import Gateway
import Store
import Wire

/// Parses export-format JSON into a node.
func node(_ json: String) throws -> Node {
    try JSONReader.readData(Array(json.utf8)).node
}

/// Parses JSON that may hold server values into a write value.
func writeValue(_ json: String) throws -> WriteValue {
    try JSONReader.readData(Array(json.utf8))
}

func path(_ text: String) throws -> Path { try Path(text) }

/// The export JSON of a node.
func json(_ node: Node) -> String {
    var writer = JSONWriter()
    writer.writeExport(node)
    return String(decoding: writer.bytes, as: UTF8.self)
}

/// The message a push content encodes to, for an untagged listen.
func message(_ content: PushContent?, tag: Int? = nil) -> String? {
    guard let content else { return nil }
    return String(decoding: EncodedPush(content).message(tag: tag), as: UTF8.self)
}

func change(_ location: String, _ old: String, _ new: String) throws -> Change {
    Change(path: try path(location), oldValue: try node(old), newValue: try node(new))
}

/// The error `body` throws as a REST error, or `nil` when it does not throw.
func restError<T>(_ body: () throws(RESTError) -> T) -> RESTError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}

/// Compact JSON text of a generic value.
func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
