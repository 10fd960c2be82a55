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

/// A seeded random number generator (SplitMix64), so randomized tests are reproducible: a failing seed can be
/// replayed. (GatewayTests does not depend on TestSupport, which has the shared one.)
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// One of `choices`, which must not be empty.
    mutating func pick<T>(_ choices: [T]) -> T {
        choices[Int.random(in: 0..<choices.count, using: &self)]
    }
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
