/// The value a child is ordered by under an index (data-model.md §7.2–§7.4), and the value of a query bound.
///
/// Order: ``null`` < ``bool(_:)`` (false < true) < ``number(_:)`` < ``string(_:)`` (UTF-16 code units) <
/// ``object`` (all objects equal). Priorities map onto the same scale — no priority is `null`, then numbers, then
/// strings — so one comparison serves every index.
public enum SortValue: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Missing value (or no priority).
    case null
    /// A boolean.
    case bool(Bool)
    /// A number.
    case number(Double)
    /// A string.
    case string(String)
    /// Any object; objects never order among themselves (ties go to the key).
    case object

    /// The sort value of a node under value order: its leaf value, ``object`` for objects, ``null`` when empty.
    public init(_ node: Node) {
        switch node.withoutPriority.storage {
        case .empty, .prioritized: self = .null
        case .bool(let flag): self = .bool(flag)
        case .number(let number): self = .number(number)
        case .string(let text): self = .string(text)
        case .children, .record: self = .object
        }
    }

    /// The sort value of a priority under priority order.
    public init(_ priority: Priority?) {
        switch priority {
        case nil: self = .null
        case .number(let number)?: self = .number(number)
        case .string(let text)?: self = .string(text)
        }
    }

    private var typeRank: Int {
        switch self {
        case .null: return 0
        case .bool: return 1
        case .number: return 2
        case .string: return 3
        case .object: return 4
        }
    }

    /// Three-way comparison: negative when `a` sorts first.
    static func compare(_ a: SortValue, _ b: SortValue) -> Int {
        switch (a, b) {
        case (.null, .null), (.object, .object):
            return 0
        case (.bool(let x), .bool(let y)):
            return x == y ? 0 : (x ? 1 : -1)
        case (.number(let x), .number(let y)):
            return x == y ? 0 : (x < y ? -1 : 1)
        case (.string(let x), .string(let y)):
            return CodeUnitOrder.compare(x, y)
        default:
            return a.typeRank < b.typeRank ? -1 : 1
        }
    }

    /// Value order.
    public static func < (lhs: SortValue, rhs: SortValue) -> Bool { compare(lhs, rhs) < 0 }

    /// Code-unit equality.
    public static func == (lhs: SortValue, rhs: SortValue) -> Bool { compare(lhs, rhs) == 0 }

    /// Hashes consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(typeRank)
        switch self {
        case .null, .object: break
        case .bool(let flag): hasher.combine(flag)
        case .number(let number): hasher.combine(number)
        case .string(let text): CodeUnitOrder.hash(text, into: &hasher)
        }
    }

    /// The value as JSON (`object` prints as `{}`).
    public var description: String {
        switch self {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number): return JSONNumberFormatter.string(number)
        case .string(let text): return "\"\(text)\""
        case .object: return "{}"
        }
    }
}
