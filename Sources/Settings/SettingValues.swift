/// Every setting's value: the table's defaults, overridden by a configuration file, then the environment, then
/// flags (``subscript(_:)``'s setter). Values are read typed, by the setting.
public struct SettingValues: Sendable {
    /// The settings these are values of.
    public let table: [any AnySetting]
    /// Each setting's value by key, always of the setting's type.
    private var storage: [String: JSONValue]

    /// The defaults of `table`.
    public init(defaultsOf table: [any AnySetting] = SettingsTable.all) {
        self.table = table
        storage = Dictionary(table.map { ($0.key, $0.defaultJSON) }, uniquingKeysWith: { first, _ in first })
    }

    /// A setting's value; setting it is a flag's override.
    public subscript<Value>(setting: Setting<Value>) -> Value {
        get {
            assert(storage[setting.key] != nil, "\(setting.key) is not in the settings table")
            return storage[setting.key].flatMap(Value.init(json:)) ?? setting.defaultValue
        }
        set {
            storage[setting.key] = newValue.json
        }
    }

    /// Applies a configuration file's top-level object; `file` names it in errors.
    public mutating func apply(file json: JSONValue, named file: String) throws(SettingsError) {
        guard case .object(let object) = json else { throw SettingsError("\(file): the top level must be an object") }
        try apply(object, prefix: "", file: file)
    }

    private mutating func apply(_ object: [String: JSONValue], prefix: String, file: String) throws(SettingsError) {
        for name in object.keys.sorted() {
            let key = prefix + name
            let value = object[name] ?? .null
            if let setting = table.first(where: { $0.key == key }) {
                guard let stored = setting.fileValue(value) else {
                    throw SettingsError("\(file): \(key) must be \(setting.typeDescription)")
                }
                storage[key] = stored
            } else if table.contains(where: { $0.key.hasPrefix(key + ".") }) {
                guard case .object(let nested) = value else { throw SettingsError("\(file): \(key) must be an object") }
                try apply(nested, prefix: key + ".", file: file)
            } else {
                throw SettingsError("\(file): unknown key \(key)")
            }
        }
    }

    /// Applies the variables of `environment` that name a setting (``AnySetting/environmentName``).
    public mutating func apply(environment: [String: String]) throws(SettingsError) {
        for setting in table {
            guard let text = environment[setting.environmentName] else { continue }
            guard let stored = setting.environmentValue(text) else {
                throw SettingsError("\(setting.environmentName) must be \(setting.typeDescription)")
            }
            storage[setting.key] = stored
        }
    }

    /// The values not allowed by their settings' rules, one line each naming the key (empty when all are).
    public var problems: [String] {
        table.compactMap { $0.problem(in: self) }
    }
}

/// Why settings could not be read; the message names the file or variable and the key.
public struct SettingsError: Error, CustomStringConvertible, Equatable {
    public let description: String

    /// An error with `description`.
    public init(_ description: String) {
        self.description = description
    }
}
