/// The value of a leaf node: a boolean, a number or a string (data-model.md §3).
///
/// Numbers are IEEE-754 doubles, as in the JS SDK: every integer up to 2^53 is exact, larger integers round to the
/// nearest double, and the JSON output is what JavaScript prints for that double (see ``JSONNumberFormatter``).
/// Rejected alternative: a separate Int64 case (as Google's server may keep) — it would make `5` and `5.0` two
/// representations of one value, cost a type tag in every comparison and still print differently from the JS SDK
/// beyond 2^53. NaN and ±Infinity are never stored; `-0` is stored as `0` (§3.2, wire-protocol.md §8.4).
public enum LeafValue: Sendable, Hashable, CustomStringConvertible {
    /// `true` or `false`.
    case bool(Bool)
    /// A finite number.
    case number(Double)
    /// A string (at most ``DataLimits/maxStringBytes`` UTF-8 bytes when it came from input).
    case string(String)

    /// Code-unit equality.
    public static func == (lhs: LeafValue, rhs: LeafValue) -> Bool {
        switch (lhs, rhs) {
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return CodeUnitOrder.equal(x, y)
        default: return false
        }
    }

    /// Hashes consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .bool(let value):
            hasher.combine(0 as UInt8)
            hasher.combine(value)
        case .number(let value):
            hasher.combine(1 as UInt8)
            hasher.combine(value)
        case .string(let value):
            hasher.combine(2 as UInt8)
            CodeUnitOrder.hash(value, into: &hasher)
        }
    }

    /// The value as JSON text.
    public var description: String {
        switch self {
        case .bool(let value): return value ? "true" : "false"
        case .number(let value): return JSONNumberFormatter.string(value)
        case .string(let value): return "\"\(value)\""
        }
    }
}
