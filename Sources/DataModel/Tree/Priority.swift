/// A node's priority: a number or a string (data-model.md §4.1); `nil` where a priority is optional means none.
///
/// Ordered as in `orderByPriority` (§7.4): numbers ascending before strings in UTF-16 code-unit order (nodes without
/// priority come before both; that case is `nil` and handled by the callers). Strings compare by code units, never
/// by Swift's canonical equivalence.
public enum Priority: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// A numeric priority (stored and ordered as a double, §3.2).
    case number(Double)
    /// A string priority.
    case string(String)

    /// Code-unit equality; `0` equals `-0` as numbers.
    public static func == (lhs: Priority, rhs: Priority) -> Bool {
        switch (lhs, rhs) {
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return CodeUnitOrder.equal(x, y)
        default: return false
        }
    }

    /// Hashes consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .number(let value):
            hasher.combine(0 as UInt8)
            hasher.combine(value)
        case .string(let value):
            hasher.combine(1 as UInt8)
            CodeUnitOrder.hash(value, into: &hasher)
        }
    }

    /// Priority order: numbers first, ascending, then strings by UTF-16 code units.
    public static func < (lhs: Priority, rhs: Priority) -> Bool {
        switch (lhs, rhs) {
        case (.number(let x), .number(let y)): return x < y
        case (.number, .string): return true
        case (.string, .number): return false
        case (.string(let x), .string(let y)): return CodeUnitOrder.compare(x, y) < 0
        }
    }

    /// The priority as it would be written in JSON (strings quoted).
    public var description: String {
        switch self {
        case .number(let value): return JSONNumberFormatter.string(value)
        case .string(let value): return "\"\(value)\""
        }
    }
}
