import DataModel

/// A value during rule evaluation (security-rules.md §5.3).
enum RuleValue: Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    /// Boxed: a snapshot is several times larger than the other cases, and every value would pay for its size.
    indirect case snapshot(RuleSnapshot)
    /// What `val()` returns for a node with children: not null, but opaque (§5.3, §6).
    case object
    /// An object or array inside `auth` (claims maps, `firebase.identities` lists).
    case json(JSONValue)

    /// The value for a JSON value from `auth`: leaves become rule values, containers stay JSON.
    init(_ json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .number(let number): self = .number(number)
        case .string(let text): self = .string(text)
        case .object, .array: self = .json(json)
        }
    }

    /// The value of a leaf, `.object` for nodes with children, `.null` for the empty node.
    init(_ node: Node) {
        switch node.leafValue {
        case .bool(let flag)?: self = .bool(flag)
        case .number(let number)?: self = .number(number)
        case .string(let text)?: self = .string(text)
        case nil: self = node.isEmpty ? .null : .object
        }
    }

    /// The type's name for error messages ("a number").
    var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .snapshot: return "a snapshot"
        case .object: return "an object value"
        case .json(.array): return "an array"
        case .json: return "an object"
        }
    }

    /// Strict equality (`==` and `===` are the same in rules, §5.4): same type and value, never an error. Strings
    /// compare by UTF-8 bytes (so by code units), numbers as IEEE doubles (NaN is unequal to itself), the opaque
    /// object value is equal to nothing (each `val()` is a new JavaScript object), `auth` containers deeply.
    static func identical(_ lhs: RuleValue, _ rhs: RuleValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return StringBytes.equal(x, y)
        case (.json(let x), .json(let y)): return x == y
        default: return false
        }
    }
}
