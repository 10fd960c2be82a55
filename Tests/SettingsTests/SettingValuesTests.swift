import Settings
import Testing

/// Reading settings from a file and the environment, and checking them with the table's rules.
@Suite("Setting values")
struct SettingValuesTests {
    @Test("environment names follow the rule, acronyms staying one word")
    func environmentNames() {
        #expect(SettingsTable.Server.idleTimeoutSeconds.environmentName == "CANOPY_SERVER_IDLE_TIMEOUT_SECONDS")
        #expect(SettingsTable.Auth.jwksURL.environmentName == "CANOPY_AUTH_JWKS_URL")
        #expect(SettingsTable.Auth.keysCAFile.environmentName == "CANOPY_AUTH_KEYS_CA_FILE")
        #expect(SettingsTable.AppCheck.projectNumber.environmentName == "CANOPY_APP_CHECK_PROJECT_NUMBER")
        let named = Setting("x.oddOne", default: 1, environment: "CANOPY_ODD", doc: "an odd one")
        #expect(named.environmentName == "CANOPY_ODD")
    }

    @Test("defaults, then the file, then the environment, then a flag")
    func layering() throws {
        var values = SettingValues()
        #expect(values[SettingsTable.Server.port] == 9000)
        try values.apply(file: .object(["server": .object(["port": .integer(1), "host": .string("0.0.0.0")])]),
                         named: "f.json")
        try values.apply(environment: ["CANOPY_SERVER_PORT": "2", "CANOPY_DATA_NAMESPACES": " a , b,c "])
        #expect(values[SettingsTable.Server.port] == 2)
        #expect(values[SettingsTable.Server.host] == "0.0.0.0")
        #expect(values[SettingsTable.Data.namespaces] == ["a", "b", "c"])
        values[SettingsTable.Server.port] = 3
        #expect(values[SettingsTable.Server.port] == 3)
        #expect(values.problems.isEmpty)
    }

    @Test("an explicitly named environment variable sets its setting")
    func explicitEnvironmentName() throws {
        let named = Setting("x.count", default: 1, .range(0...9), environment: "CANOPY_COUNT", doc: "a count")
        var values = SettingValues(defaultsOf: [named])
        try values.apply(environment: ["CANOPY_COUNT": "7", "CANOPY_X_COUNT": "8"])
        #expect(values[named] == 7)
    }

    @Test("the file's mistakes name the file and the key")
    func fileErrors() {
        var values = SettingValues()
        #expect(throws: SettingsError("f.json: unknown key server.nope")) {
            try values.apply(file: .object(["server": .object(["nope": .integer(1)])]), named: "f.json")
        }
        #expect(throws: SettingsError("f.json: unknown key extra")) {
            try values.apply(file: .object(["extra": .integer(1)]), named: "f.json")
        }
        #expect(throws: SettingsError("f.json: server must be an object")) {
            try values.apply(file: .object(["server": .integer(1)]), named: "f.json")
        }
        #expect(throws: SettingsError("f.json: server.port must be an integer")) {
            try values.apply(file: .object(["server": .object(["port": .number(1.5)])]), named: "f.json")
        }
        #expect(throws: SettingsError("f.json: the top level must be an object")) {
            try values.apply(file: .array([]), named: "f.json")
        }
    }

    @Test("the environment's mistakes name the variable")
    func environmentErrors() {
        var values = SettingValues()
        #expect(throws: SettingsError("CANOPY_SERVER_PORT must be an integer")) {
            try values.apply(environment: ["CANOPY_SERVER_PORT": "many"])
        }
        #expect(throws: SettingsError("CANOPY_REST_REQUIRE_INDEXES must be true or false")) {
            try values.apply(environment: ["CANOPY_REST_REQUIRE_INDEXES": "maybe"])
        }
        #expect(throws: SettingsError("CANOPY_AUTH_CLOCK_SKEW_SECONDS must be a number")) {
            try values.apply(environment: ["CANOPY_AUTH_CLOCK_SKEW_SECONDS": "soon"])
        }
    }

    @Test("an empty environment variable clears an optional text")
    func emptyOptional() throws {
        var values = SettingValues()
        try values.apply(environment: ["CANOPY_AUTH_ISSUER": ""])
        #expect(values[SettingsTable.Auth.issuer] == nil)
    }

    @Test("a project number may be written as a JSON number")
    func projectNumber() throws {
        var values = SettingValues()
        try values.apply(file: .object(["appCheck": .object(["projectNumber": .integer(123)])]), named: "f.json")
        #expect(values[SettingsTable.AppCheck.projectNumber] == "123")
        values[SettingsTable.AppCheck.projectNumber] = "12a"
        #expect(values.problems == [#"appCheck.projectNumber must be the project's number (digits), not "12a""#])
    }
}
