import Primitives

extension Node {
    /// The SDK's hash of this node (wire-protocol.md §8.2): `""` for the empty node, else 28 base64 characters.
    /// Compare-and-set puts and listen `h` values use it; see ``NodeHash``.
    public var hash: String {
        NodeHash.hash(self, sha1: { SHA1.hash($0) }, base64: { Base64.encode($0) })
    }
}
