import Primitives

/// What values a setting allows: a range, a list of allowed values, or a check of its form. A rule may depend on
/// another setting's value (a high-water mark at least the low-water mark).
public struct SettingRule<Value: SettingType>: Sendable {
    /// The problem with `value` of the setting `key`, given every setting's value; `nil` when it is allowed.
    let problem: @Sendable (_ key: String, _ value: Value, _ values: SettingValues) -> String?

    /// A rule checking values with `problem`.
    public init(_ problem: @escaping @Sendable (_ key: String, _ value: Value, _ values: SettingValues) -> String?) {
        self.problem = problem
    }

    /// Every value of the type is allowed.
    public static var any: SettingRule { SettingRule { _, _, _ in nil } }
}

extension SettingRule where Value == Int {
    /// A value in `range`.
    public static func range(_ range: ClosedRange<Int>) -> SettingRule {
        SettingRule { key, value, _ in outside(range, key, value) }
    }

    /// A value at least `other`'s (and at least 1), at most `upperBound`.
    public static func atLeast(_ other: Setting<Int>, upTo upperBound: Int) -> SettingRule {
        SettingRule { key, value, values in outside(max(1, values[other])...max(1, values[other], upperBound), key, value) }
    }

    private static func outside(_ range: ClosedRange<Int>, _ key: String, _ value: Int) -> String? {
        range.contains(value) ? nil : "\(key) must be \(range.lowerBound)…\(range.upperBound), not \(value)"
    }
}

extension SettingRule where Value == Double {
    /// A finite value in `range`.
    public static func range(_ range: ClosedRange<Double>) -> SettingRule {
        SettingRule { key, value, _ in outside(range, key, value) }
    }

    /// A finite value from `lowerBound` to `fraction` of `other`'s value (but at least `lowerBound`).
    public static func from(_ lowerBound: Double, toFraction fraction: Double, of other: Setting<Double>) -> SettingRule {
        SettingRule { key, value, values in
            let upperBound = values[other] * fraction
            return outside(lowerBound...(upperBound.isFinite ? max(lowerBound, upperBound) : lowerBound), key, value)
        }
    }

    private static func outside(_ range: ClosedRange<Double>, _ key: String, _ value: Double) -> String? {
        value.isFinite && range.contains(value)
            ? nil : "\(key) must be \(range.lowerBound)…\(range.upperBound), not \(value)"
    }
}

extension SettingRule where Value == String {
    /// Any text but the empty one.
    public static var nonEmpty: SettingRule {
        SettingRule { key, value, _ in value.isEmpty ? "\(key) must not be empty" : nil }
    }

    /// One of `allowed` (compared in lower case).
    public static func oneOf(_ allowed: [String]) -> SettingRule {
        SettingRule { key, value, _ in
            allowed.contains(value.lowercased())
                ? nil : "\(key) must be one of \(allowed.joined(separator: ", ")), not \"\(value.prefix(40))\""
        }
    }

    /// An `https://` URL.
    public static var httpsURL: SettingRule {
        SettingRule { key, value, _ in TextForm.httpsURLProblem(key, value) }
    }
}

extension SettingRule where Value == String? {
    /// None, or an `https://` URL.
    public static var httpsURL: SettingRule {
        SettingRule { key, value, _ in value.flatMap { TextForm.httpsURLProblem(key, $0) } }
    }

    /// None, or a Firebase project's number: digits.
    public static var projectNumber: SettingRule {
        SettingRule { key, value, _ in
            guard let value, value.isEmpty || !value.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return "\(key) must be the project's number (digits), not \"\(value.prefix(40))\""
        }
    }
}

extension SettingRule where Value == [String] {
    /// Namespace names or patterns: each 1-63 of `a-z A-Z 0-9 - _ *`.
    public static var namespacePatterns: SettingRule {
        SettingRule { key, value, _ in
            guard let wrong = value.first(where: { !TextForm.isNamespacePattern($0) }) else { return nil }
            return "\(key) entries must be 1-63 of a-z A-Z 0-9 - _ *, not \"\(wrong.prefix(80))\""
        }
    }
}

/// The forms of text rules check.
enum TextForm {
    static func httpsURLProblem(_ key: String, _ value: String) -> String? {
        value.lowercased().hasPrefix("https://") ? nil : "\(key) must be an https:// URL, not \"\(value.prefix(80))\""
    }

    /// 1-63 of `a-z A-Z 0-9 - _ *`.
    static func isNamespacePattern(_ entry: String) -> Bool {
        let bytes = Array(entry.utf8)
        guard !bytes.isEmpty, bytes.count <= 63 else { return false }
        return bytes.allSatisfy { ASCIIBytes.isWordOrDash($0) || $0 == UInt8(ascii: "*") }
    }
}
