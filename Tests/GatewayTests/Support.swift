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
    let push: EncodedPush
    switch content {
    case .data(let path, let node): push = EncodedPush(path: path, data: node)
    case .merge(let path, let changes): push = EncodedPush(path: path, changes: changes)
    }
    return String(decoding: push.message(tag: tag), as: UTF8.self)
}

func change(_ location: String, _ old: String, _ new: String) throws -> Change {
    Change(path: try path(location), oldValue: try node(old), newValue: try node(new))
}
