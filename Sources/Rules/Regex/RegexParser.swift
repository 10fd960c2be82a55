/// Parses the regular-expression subset rules support (security-rules.md §10): literals, `.`, `\d \w \s \D \W \S`,
/// `\` escaping the next character, `[abc] [a-z] [^abc]` sets, `( … )` groups, `a|b`, the quantifiers
/// `* + ? {n} {n,} {n,m}`, `^` only as the very first and `$` only as the very last character, and the flag `i`.
///
/// Everything else is an error at load time, as Firebase rejects it when rules are deployed: other flags, anchors
/// elsewhere, empty alternatives, group modifiers (`(?:`, lookarounds), lazy quantifiers, back-references and word
/// boundaries. Errors carry the UTF-8 offset within the pattern.
struct RegexParser {
    /// A problem at a UTF-8 offset of the pattern.
    struct Failure: Error, Sendable {
        var offset: Int
        var message: String
    }

    /// Largest `n` or `m` in `{n,m}`.
    static let maxRepeatCount = 1000
    /// Deepest group nesting.
    static let maxGroupDepth = 50

    private let scalars: [Unicode.Scalar]
    /// UTF-8 offset of each scalar, plus the pattern's length.
    private let offsets: [Int]
    private var index = 0
    private var end: Int
    private var groupDepth = 0

    /// Parses `pattern` with `flags` into a compiled program.
    static func compile(pattern: String, flags: String, maxInstructions: Int) throws(Failure) -> RegexProgram {
        var caseInsensitive = false
        var flagOffset = pattern.utf8.count + 1
        for flag in flags.unicodeScalars {
            guard flag == "i", !caseInsensitive else {
                throw Failure(offset: flagOffset, message: "unsupported regular-expression flag '\(flag)' (only 'i' is allowed)")
            }
            caseInsensitive = true
            flagOffset += 1
        }
        var parser = RegexParser(pattern)
        guard !parser.scalars.isEmpty else { throw Failure(offset: 0, message: "empty regular expression") }
        var anchoredStart = false
        var anchoredEnd = false
        if parser.scalars[0] == "^" {
            anchoredStart = true
            parser.index = 1
        }
        if parser.end > parser.index, parser.scalars[parser.end - 1] == "$", parser.isUnescaped(parser.end - 1) {
            anchoredEnd = true
            parser.end -= 1
        }
        // `/^$/` and friends: nothing between the anchors matches the empty string.
        let syntax = parser.index == parser.end ? .sequence([]) : try parser.parseAlternation()
        if parser.index < parser.end {
            throw parser.failure("unmatched ')'")
        }
        return try RegexProgram(
            syntax: syntax, anchoredStart: anchoredStart, anchoredEnd: anchoredEnd, caseInsensitive: caseInsensitive,
            maxInstructions: maxInstructions)
    }

    private init(_ pattern: String) {
        var scalars: [Unicode.Scalar] = []
        var offsets: [Int] = []
        var offset = 0
        for scalar in pattern.unicodeScalars {
            scalars.append(scalar)
            offsets.append(offset)
            offset += UTF8.width(scalar)
        }
        offsets.append(offset)
        self.scalars = scalars
        self.offsets = offsets
        self.end = scalars.count
    }

    /// Whether the scalar at `position` is not escaped by an odd number of backslashes before it.
    private func isUnescaped(_ position: Int) -> Bool {
        var backslashes = 0
        var probe = position - 1
        while probe >= 0, scalars[probe] == "\\" {
            backslashes += 1
            probe -= 1
        }
        return backslashes % 2 == 0
    }

    private func failure(_ message: String, at position: Int? = nil) -> Failure {
        Failure(offset: offsets[min(position ?? index, offsets.count - 1)], message: message)
    }

    private var current: Unicode.Scalar? { index < end ? scalars[index] : nil }

    // MARK: - Structure

    private mutating func parseAlternation() throws(Failure) -> RegexSyntax {
        var alternatives: [RegexSyntax] = []
        while true {
            let start = index
            let sequence = try parseSequence()
            if case .sequence(let parts) = sequence, parts.isEmpty {
                throw failure("empty alternative in a regular expression", at: start)
            }
            alternatives.append(sequence)
            guard current == "|" else { break }
            index += 1
        }
        return alternatives.count == 1 ? alternatives[0] : .alternation(alternatives)
    }

    private mutating func parseSequence() throws(Failure) -> RegexSyntax {
        var parts: [RegexSyntax] = []
        while let scalar = current, scalar != "|", scalar != ")" {
            var atom = try parseAtom()
            var quantified = false
            while true {
                let quantifierStart = index
                guard let (minimum, maximum) = try parseQuantifier() else { break }
                if quantified {
                    throw failure(
                        "a quantifier may not follow another quantifier (lazy quantifiers are not supported)",
                        at: quantifierStart)
                }
                quantified = true
                atom = .repetition(atom, minimum: minimum, maximum: maximum)
            }
            parts.append(atom)
        }
        return parts.count == 1 ? parts[0] : .sequence(parts)
    }

    /// Reads a quantifier at the current position, or returns nil when there is none.
    private mutating func parseQuantifier() throws(Failure) -> (Int, Int?)? {
        switch current {
        case "*":
            index += 1
            return (0, nil)
        case "+":
            index += 1
            return (1, nil)
        case "?":
            index += 1
            return (0, 1)
        case "{":
            guard let (minimum, maximum, length) = braceQuantifier(at: index) else {
                throw failure("'{' must be escaped as '\\{' unless it starts a quantifier {n}, {n,} or {n,m}")
            }
            if let maximum, maximum < minimum { throw failure("quantifier {\(minimum),\(maximum)} is out of order") }
            if max(minimum, maximum ?? 0) > Self.maxRepeatCount {
                throw failure("repeat counts above \(Self.maxRepeatCount) are not supported")
            }
            index += length
            return (minimum, maximum)
        default:
            return nil
        }
    }

    /// Parses `{n}`, `{n,}` or `{n,m}` at `start` without consuming: bounds and the length in scalars.
    private func braceQuantifier(at start: Int) -> (Int, Int?, Int)? {
        var position = start + 1
        func number() -> Int? {
            var value = 0
            var digits = 0
            while position < end, scalars[position].value >= 0x30, scalars[position].value <= 0x39 {
                value = value * 10 + Int(scalars[position].value - 0x30)
                digits += 1
                position += 1
                value = min(value, RegexParser.maxRepeatCount + 1)
            }
            return digits > 0 ? value : nil
        }
        guard let minimum = number() else { return nil }
        var maximum: Int? = minimum
        if position < end, scalars[position] == "," {
            position += 1
            if position < end, scalars[position] == "}" {
                maximum = nil
            } else {
                guard let upper = number() else { return nil }
                maximum = upper
            }
        }
        guard position < end, scalars[position] == "}" else { return nil }
        return (minimum, maximum, position + 1 - start)
    }

    private mutating func parseAtom() throws(Failure) -> RegexSyntax {
        guard let scalar = current else { throw failure("unexpected end of regular expression") }
        switch scalar {
        case "(":
            groupDepth += 1
            guard groupDepth <= Self.maxGroupDepth else { throw failure("groups nested too deeply") }
            let open = index
            index += 1
            if current == "?" {
                throw failure("group modifiers such as (?: (?= (?! are not supported")
            }
            let inner = try parseAlternation()
            guard current == ")" else { throw failure("unterminated group", at: open) }
            index += 1
            groupDepth -= 1
            return inner
        case "[":
            return .set(try parseSet())
        case ".":
            index += 1
            return .anyCharacter
        case "\\":
            return try parseEscape(inSet: false)
        case "^", "$":
            throw failure("'\(scalar)' is only allowed as the first ('^') or last ('$') character of a rules regular expression")
        case "*", "+", "?":
            throw failure("nothing to repeat before '\(scalar)'")
        case "{":
            if braceQuantifier(at: index) != nil { throw failure("nothing to repeat before '{'") }
            throw failure("'{' must be escaped as '\\{'")
        case "}", "]":
            throw failure("'\(scalar)' must be escaped as '\\\(scalar)'")
        default:
            index += 1
            return .scalar(scalar)
        }
    }

    /// Reads an escape at the backslash. Class escapes give sets; `\n \r \t \f \v \0` control characters; any other
    /// punctuation stands for itself. Other letters and digits (`\b`, `\1`, `\u…`) are features rules do not have.
    private mutating func parseEscape(inSet: Bool) throws(Failure) -> RegexSyntax {
        let start = index
        index += 1
        guard index < end else { throw failure("'\\' at the end of a regular expression", at: start) }
        let scalar = scalars[index]
        index += 1
        switch scalar {
        case "d": return .set(RegexCharacterSet(classes: [(.digit, false)]))
        case "D": return .set(RegexCharacterSet(classes: [(.digit, true)]))
        case "w": return .set(RegexCharacterSet(classes: [(.word, false)]))
        case "W": return .set(RegexCharacterSet(classes: [(.word, true)]))
        case "s": return .set(RegexCharacterSet(classes: [(.space, false)]))
        case "S": return .set(RegexCharacterSet(classes: [(.space, true)]))
        case "n": return .scalar("\n")
        case "r": return .scalar("\r")
        case "t": return .scalar("\t")
        case "f": return .scalar("\u{0C}")
        case "v": return .scalar("\u{0B}")
        case "0": return .scalar("\u{00}")
        case "b" where inSet: return .scalar("\u{08}")
        default:
            if scalar.value < 0x80, scalar.properties.isAlphabetic || (scalar.value >= 0x30 && scalar.value <= 0x39) {
                throw failure("unsupported escape '\\\(scalar)' in a rules regular expression", at: start)
            }
            return .scalar(scalar)
        }
    }

    /// Reads a bracket expression starting at `[`.
    private mutating func parseSet() throws(Failure) -> RegexCharacterSet {
        let open = index
        index += 1
        var set = RegexCharacterSet()
        if current == "^" {
            set.negated = true
            index += 1
        }
        var empty = true
        while true {
            guard let scalar = current else { throw failure("unterminated character set '['", at: open) }
            if scalar == "]" {
                index += 1
                break
            }
            let itemStart = index
            let low = try parseSetItem()
            if case .scalar(let lowScalar) = low, current == "-", index + 1 < end, scalars[index + 1] != "]" {
                index += 1
                let high = try parseSetItem()
                guard case .scalar(let highScalar) = high else {
                    throw failure("a class escape cannot end a range", at: itemStart)
                }
                guard lowScalar.value <= highScalar.value else {
                    throw failure("range out of order in a character set", at: itemStart)
                }
                set.ranges.append(lowScalar.value...highScalar.value)
            } else {
                switch low {
                case .scalar(let single): set.ranges.append(single.value...single.value)
                case .set(let inner): set.classes.append(contentsOf: inner.classes)
                default: throw failure("invalid character set item", at: itemStart)
                }
            }
            empty = false
        }
        if empty { throw failure("empty character set '[]'", at: open) }
        return set
    }

    private mutating func parseSetItem() throws(Failure) -> RegexSyntax {
        guard let scalar = current else { throw failure("unterminated character set") }
        if scalar == "\\" { return try parseEscape(inSet: true) }
        index += 1
        return .scalar(scalar)
    }
}

extension RegexCharacterSet {
    init(classes: [(kind: Class, negated: Bool)]) {
        self.init()
        self.classes = classes
    }
}
