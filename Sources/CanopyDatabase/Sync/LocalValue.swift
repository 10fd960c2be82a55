import DataModel

/// A value the client wrote, as local listeners see it: a node, or a set's JSON text (plain data, checked as it was
/// written, see ``ValueWriter``) read into its node the first time a view needs it. A client that observes nothing
/// it writes never reads its own writes back. Used on the connection's thread only.
final class LocalValue {
    private enum Content {
        case node(Node)
        case json([UInt8], depth: Int)
    }

    private var content: Content

    /// A value already read.
    init(node: Node) {
        content = .node(node)
    }

    /// Plain data's JSON text written at `depth`.
    init(json: [UInt8], depth: Int) {
        content = .json(json, depth: depth)
    }

    /// The value's node. The text was checked when written, so the reader accepts it; were it to refuse it, the
    /// write shows as no data locally (the server, which reads the same text, answers for it).
    var node: Node {
        switch content {
        case .node(let node):
            return node
        case .json(let json, let depth):
            let node = (try? JSONReader.readData(json, depth: depth).node) ?? .empty
            content = .node(node)
            return node
        }
    }
}
