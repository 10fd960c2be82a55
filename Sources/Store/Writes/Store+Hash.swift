import DataModel
import Primitives

extension Store {
    /// The SDK's hash of `node` (wire-protocol.md §8.2): what a compare-and-set's expected hash is compared with,
    /// and what a listen's `h` carries. `""` for the empty node.
    public static func hash(of node: Node) -> String {
        NodeHash.hash(node, sha1: { SHA1.hash($0) }, base64: { Base64.encode($0) })
    }
}
