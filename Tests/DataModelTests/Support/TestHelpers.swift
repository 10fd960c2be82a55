@testable import DataModel

/// Parses JSON data for tests; fails the test on invalid input via a thrown error.
func node(_ json: String) throws -> Node {
    try JSONReader.readData(Array(json.utf8)).node
}

/// Compact export JSON of a node.
func export(_ node: Node) -> String {
    node.description
}

/// A key from a literal known to be valid.
func key(_ text: String) throws -> Key {
    try Key(text)
}

/// The SDK hash with the test-only digests.
func sdkHash(_ node: Node) -> String {
    NodeHash.hash(node, sha1: TestDigest.sha1, base64: TestDigest.base64)
}
