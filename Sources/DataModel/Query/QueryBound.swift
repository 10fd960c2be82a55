/// The key part of a query bound: a key name or one of the sentinels that sort before/after every key
/// (wire-protocol.md §7: `[MIN_NAME]`, `[MAX_NAME]`, Android's `[MAX_KEY]`).
public enum BoundName: Sendable, Hashable, CustomStringConvertible {
    /// Before every key.
    case min
    /// A key name, compared in key order; it need not be a valid key (iOS sends successor names like `"bob "`).
    case key(Key)
    /// After every key.
    case max

    /// The sentinel texts.
    public static let minNameText = "[MIN_NAME]"
    /// The JS/iOS maximum sentinel.
    public static let maxNameText = "[MAX_NAME]"
    /// Android's maximum sentinel.
    public static let maxKeyText = "[MAX_KEY]"

    /// Interprets a wire `sn`/`en` string.
    public init(wireName: String) {
        if CodeUnitOrder.equal(wireName, Self.minNameText) {
            self = .min
        } else if CodeUnitOrder.equal(wireName, Self.maxNameText) || CodeUnitOrder.equal(wireName, Self.maxKeyText) {
            self = .max
        } else {
            self = .key(Key(unchecked: wireName))
        }
    }

    /// Three-way comparison of this bound name against a real key.
    func compare(to key: Key) -> Int {
        switch self {
        case .min: return -1
        case .max: return 1
        case .key(let name): return Key.compare(name, key)
        }
    }

    /// The wire text.
    public var description: String {
        switch self {
        case .min: return Self.minNameText
        case .key(let key): return key.string
        case .max: return Self.maxNameText
        }
    }
}

/// One end of a query range: a position `(value, name)` and whether children at exactly that position belong to
/// the range (data-model.md §8.2).
///
/// For the key index the position is the key `value` (a string) alone and `name` is unused.
public struct QueryBound: Sendable, Hashable {
    /// The bound value (`sp` / `ep`).
    public var value: SortValue
    /// The bound key name (`sn` / `en`).
    public var name: BoundName
    /// `sin` / `ein`.
    public var inclusive: Bool

    /// Creates a bound; sentinels make inclusivity irrelevant (no key equals them), so it is normalized to
    /// `true` for them and equal queries hash alike whichever SDK sent them.
    public init(value: SortValue, name: BoundName, inclusive: Bool = true) {
        self.value = value
        self.name = name
        switch name {
        case .min, .max: self.inclusive = true
        case .key: self.inclusive = inclusive
        }
    }
}
