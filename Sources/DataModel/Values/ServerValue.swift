/// A server-value placeholder written by clients and resolved by the server at apply time (wire-protocol.md §9).
public enum ServerValue: Sendable, Equatable {
    /// `{".sv":"timestamp"}`: the server's clock in milliseconds since the Unix epoch.
    case timestamp
    /// `{".sv":{"increment":n}}`: the current number plus `n`; `n` itself when the current value is missing or not
    /// a number.
    case increment(Double)

    /// Parses the payload of a `.sv` member: `"timestamp"` or `{"increment": <number>}` (exactly that member).
    public init?(json: JSONValue) {
        switch json {
        case .string(let name) where CodeUnitOrder.equal(name, "timestamp"):
            self = .timestamp
        case .object(let members):
            guard members.count == 1, CodeUnitOrder.equal(members[0].key, "increment"),
                case .number(let delta) = members[0].value
            else { return nil }
            self = .increment(delta)
        default:
            return nil
        }
    }

    /// The resolved number, given the server clock and the value currently stored at the target.
    ///
    /// Numbers are doubles (see ``LeafValue``), so an integer sum is exact up to 2^53 and rounds to the nearest
    /// double beyond — the JS SDK's own arithmetic ("JS only handles floats"); Android's 64-bit integer sum agrees
    /// whenever the result fits 53 bits.
    /// - Parameters:
    ///   - timestamp: server time in milliseconds since the Unix epoch.
    ///   - current: the number currently stored at the target, `nil` when missing or not a number.
    /// - Throws: ``ValueError/numberOutOfRange`` when the sum overflows the double range.
    public func resolve(timestamp: Double, current: Double?) throws(ValueError) -> Double {
        switch self {
        case .timestamp:
            return timestamp
        case .increment(let delta):
            guard let current else { return delta }
            let sum = current + delta
            guard sum.isFinite else { throw .numberOutOfRange }
            return sum == 0 ? 0 : sum
        }
    }
}

/// Where a server value sits inside a written value.
public struct ServerValuePlaceholder: Sendable, Equatable {
    /// Location relative to the write path.
    public var path: Path
    /// Whether the placeholder is the priority of the node at ``path`` rather than its value.
    public var isPriority: Bool
    /// What to compute.
    public var value: ServerValue

    /// Creates a placeholder record.
    public init(path: Path, isPriority: Bool, value: ServerValue) {
        self.path = path
        self.isPriority = isPriority
        self.value = value
    }
}
