/// One configuration setting, declared once in ``SettingsTable``: its key in `Config/canopy.json`, default, rule
/// (range or allowed values), environment variable, `canopy serve` flag and one line of documentation.
public struct Setting<Value: SettingType>: AnySetting {
    /// The key path in the configuration file, e.g. `server.idleTimeoutSeconds`.
    public let key: String
    /// The value when neither the file, the environment nor a flag sets one.
    public let defaultValue: Value
    /// What values are allowed.
    public let rule: SettingRule<Value>
    /// The `canopy serve` flag that sets it (`--port`), if any.
    public let flag: String?
    /// The environment variable that sets it: `CANOPY_` and the key in upper snake case unless named explicitly.
    public let environmentName: String
    /// One line of documentation, as the README's settings table shows it.
    public let doc: String
    /// Whether the file may write the value as a JSON number (a project number: digits either way).
    let readsNumbersAsText: Bool

    /// Declares a setting; `environment` names its variable when the rule's name does not fit.
    public init(_ key: String, default defaultValue: Value, _ rule: SettingRule<Value> = .any, flag: String? = nil,
                environment: String? = nil, readsNumbersAsText: Bool = false, doc: String)
    {
        self.key = key
        self.defaultValue = defaultValue
        self.rule = rule
        self.flag = flag
        self.environmentName = environment ?? EnvironmentName.derived(fromKey: key)
        self.readsNumbersAsText = readsNumbersAsText
        self.doc = doc
    }

    public var defaultJSON: JSONValue { defaultValue.json }
    public var defaultText: String { defaultValue.displayText }
    public var typeDescription: String { Value.typeDescription }

    public func fileValue(_ json: JSONValue) -> JSONValue? {
        if readsNumbersAsText, case .integer(let number) = json { return Value(json: .string(String(number)))?.json }
        return Value(json: json)?.json
    }

    public func environmentValue(_ text: String) -> JSONValue? {
        Value(text: text)?.json
    }

    public func problem(in values: SettingValues) -> String? {
        rule.problem(key, values[self], values)
    }
}

/// A setting of any type, as the table lists them.
public protocol AnySetting: Sendable {
    /// The key path in the configuration file.
    var key: String { get }
    /// The `canopy serve` flag that sets it, if any.
    var flag: String? { get }
    /// The environment variable that sets it.
    var environmentName: String { get }
    /// One line of documentation.
    var doc: String { get }
    /// The default as JSON.
    var defaultJSON: JSONValue { get }
    /// The default as the README and `--help` show it.
    var defaultText: String { get }
    /// What a value must be ("an integer"), for error messages.
    var typeDescription: String { get }
    /// The value a configuration file holds, as stored, or `nil` when it has the wrong type.
    func fileValue(_ json: JSONValue) -> JSONValue?
    /// The value an environment variable holds, as stored, or `nil` when it cannot be read.
    func environmentValue(_ text: String) -> JSONValue?
    /// Why the setting's value in `values` is not allowed, or `nil` when it is.
    func problem(in values: SettingValues) -> String?
}

extension AnySetting {
    /// The doc and the default, for the flag's `--help`.
    public var help: String {
        "\(doc) (default: \(defaultText))"
    }
}
