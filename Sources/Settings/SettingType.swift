/// A type a setting's value may have: how it is read from the configuration file and from an environment
/// variable, and how it is shown.
public protocol SettingType: Sendable, Equatable {
    /// What a value of this type must be, for error messages ("an integer").
    static var typeDescription: String { get }
    /// The value a configuration file's JSON holds, or `nil` when it has another type.
    init?(json: JSONValue)
    /// The value a text holds (an environment variable, a flag), or `nil` when it cannot be read.
    init?(text: String)
    /// The value as JSON.
    var json: JSONValue { get }
    /// The value as the README and `--help` show it (`none` for no value).
    var displayText: String { get }
}

extension Int: SettingType {
    public static var typeDescription: String { "an integer" }

    public init?(json: JSONValue) {
        guard case .integer(let value) = json else { return nil }
        self = value
    }

    public init?(text: String) {
        if let value = Int(text) {
            self = value
        } else if let number = Double(text), let value = Int(exactly: number) {
            self = value
        } else {
            return nil
        }
    }

    public var json: JSONValue { .integer(self) }
    public var displayText: String { String(self) }
}

extension Double: SettingType {
    public static var typeDescription: String { "a number" }

    public init?(json: JSONValue) {
        switch json {
        case .integer(let value): self = Double(value)
        case .number(let value): self = value
        default: return nil
        }
    }

    public init?(text: String) {
        guard let value = Double(text) else { return nil }
        self = value
    }

    public var json: JSONValue { Int(exactly: self).map(JSONValue.integer) ?? .number(self) }
    public var displayText: String { Int(exactly: self).map(String.init) ?? String(self) }
}

extension Bool: SettingType {
    public static var typeDescription: String { "true or false" }

    public init?(json: JSONValue) {
        guard case .bool(let value) = json else { return nil }
        self = value
    }

    public init?(text: String) {
        guard let value = Bool(text.lowercased()) else { return nil }
        self = value
    }

    public var json: JSONValue { .bool(self) }
    public var displayText: String { String(self) }
}

extension String: SettingType {
    public static var typeDescription: String { "a string" }

    public init?(json: JSONValue) {
        guard case .string(let value) = json else { return nil }
        self = value
    }

    public init?(text: String) {
        self = text
    }

    public var json: JSONValue { .string(self) }
    public var displayText: String { isEmpty ? "\"\"" : self }
}

/// An optional text: `null` in the file, an empty environment variable, or no flag means none.
extension Optional: SettingType where Wrapped == String {
    public static var typeDescription: String { "a string or null" }

    public init?(json: JSONValue) {
        switch json {
        case .null: self = .none
        case .string(let value): self = .some(value)
        default: return nil
        }
    }

    public init?(text: String) {
        self = text.isEmpty ? .none : .some(text)
    }

    public var json: JSONValue { map(JSONValue.string) ?? .null }
    public var displayText: String { self ?? "none" }
}

/// A list of texts; in an environment variable (or a flag), comma-separated with blanks around each trimmed.
extension Array: SettingType where Element == String {
    public static var typeDescription: String { "a list of strings" }

    public init?(json: JSONValue) {
        guard case .array(let elements) = json else { return nil }
        var texts: [String] = []
        for element in elements {
            guard case .string(let text) = element else { return nil }
            texts.append(text)
        }
        self = texts
    }

    public init?(text: String) {
        self = text.split(separator: ",").map { String($0).trimmingBlanks() }
    }

    public var json: JSONValue { .array(map(JSONValue.string)) }
    public var displayText: String { isEmpty ? "none" : joined(separator: ",") }
}

extension String {
    /// The text without the spaces and tabs it starts and ends with.
    fileprivate func trimmingBlanks() -> String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
