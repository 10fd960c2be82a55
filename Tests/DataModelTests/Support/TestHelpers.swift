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

/// The SDK hash (Primitives' SHA-1 and base64).
func sdkHash(_ node: Node) -> String {
    node.hash
}
