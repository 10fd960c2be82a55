/// The parsed form of a rules regular expression (security-rules.md §10), before compilation to a ``RegexProgram``.
indirect enum RegexSyntax: Sendable {
    /// Matches one character equal to the scalar.
    case scalar(Unicode.Scalar)
    /// `.`: any character except a line terminator.
    case anyCharacter
    /// A bracket expression or a class escape (`\d`, `\w`, …).
    case set(RegexCharacterSet)
    /// The parts one after another.
    case sequence([RegexSyntax])
    /// One of the alternatives (`a|b`).
    case alternation([RegexSyntax])
    /// `node{minimum,maximum}`; `maximum` nil is unbounded (`*`, `+`, `{n,}`).
    case repetition(RegexSyntax, minimum: Int, maximum: Int?)
}

/// A set of characters: ranges and class escapes, possibly negated (`[^…]`).
struct RegexCharacterSet: Sendable {
    /// Class escapes usable inside and outside brackets.
    enum Class: Sendable {
        case digit, word, space
    }

    /// Inclusive scalar ranges.
    var ranges: [ClosedRange<UInt32>] = []
    /// Classes and whether each is negated (`\D` is `(.digit, true)`).
    var classes: [(kind: Class, negated: Bool)] = []
    /// Whether the whole set is negated.
    var negated = false

    /// Whether `value` is in the set, ignoring case when `caseInsensitive` (then the lower- and uppercase forms of
    /// the character are tried too).
    func contains(_ value: UInt32, lower: UInt32, upper: UInt32, caseInsensitive: Bool) -> Bool {
        var found = containsExactly(value)
        if !found && caseInsensitive { found = containsExactly(lower) || containsExactly(upper) }
        return found != negated
    }

    private func containsExactly(_ value: UInt32) -> Bool {
        for range in ranges where range.contains(value) { return true }
        for (kind, negated) in classes where Self.classContains(kind, value) != negated { return true }
        return false
    }

    /// JavaScript's class definitions (ECMA-262 §22.2.2.9): `\d` ASCII digits, `\w` ASCII word characters, `\s`
    /// white space and line terminators.
    static func classContains(_ kind: Class, _ value: UInt32) -> Bool {
        switch kind {
        case .digit:
            return value >= 0x30 && value <= 0x39
        case .word:
            return (value >= 0x30 && value <= 0x39) || (value >= 0x41 && value <= 0x5A) || (value >= 0x61 && value <= 0x7A)
                || value == 0x5F
        case .space:
            switch value {
            case 0x09...0x0D, 0x20, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
                return true
            default:
                return false
            }
        }
    }
}
