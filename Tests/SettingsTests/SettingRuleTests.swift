import Gateway
import Logging
import Settings
import Testing

/// The table's rules.
@Suite("Setting rules")
struct SettingRuleTests {
    @Test("out of range values are named with their range")
    func ranges() {
        var values = SettingValues()
        values[SettingsTable.Server.port] = 70_000
        values[SettingsTable.Server.idleTimeoutSeconds] = -1
        #expect(values.problems == [
            "server.port must be 0…65535, not 70000", "server.idleTimeoutSeconds must be 0.0…86400.0, not -1.0",
        ])
    }

    @Test("a rule may depend on another setting, and never traps on any value of it")
    func relativeRules() {
        var values = SettingValues()
        values[SettingsTable.Outbound.lowWaterMarkBytes] = 1000
        values[SettingsTable.Outbound.highWaterMarkBytes] = 10
        #expect(values.problems.contains("outbound.highWaterMarkBytes must be 1000…1073741824, not 10"))
        values[SettingsTable.Outbound.lowWaterMarkBytes] = Int.max
        #expect(!values.problems.isEmpty)
        for idle in [Double.nan, .infinity, -1, 0] {
            values[SettingsTable.Gateway.longPollIdleTimeoutSeconds] = idle
            #expect(!values.problems.isEmpty)
        }
        values = SettingValues()
        values[SettingsTable.Gateway.longPollHoldSeconds] = 28
        #expect(values.problems == ["gateway.longPollHoldSeconds must be 0.1…27.0, not 28.0"])
    }

    @Test("allowed texts, URLs and namespace patterns")
    func texts() {
        var values = SettingValues()
        values[SettingsTable.Log.format] = "xml"
        values[SettingsTable.Auth.jwksURL] = "http://x"
        values[SettingsTable.Data.namespaces] = ["ok", "chat-*", "../escape"]
        values[SettingsTable.Server.host] = ""
        #expect(values.problems == [
            "server.host must not be empty", #"data.namespaces entries must be 1-63 of a-z A-Z 0-9 - _ *, not "../escape""#,
            #"auth.jwksURL must be an https:// URL, not "http://x""#, #"log.format must be one of text, json, not "xml""#,
        ])
    }

    @Test("the allowed values are the components' own: log levels and App Check modes")
    func allowedValuesMatchComponents() {
        for level in Logger.Level.allCases {
            var values = SettingValues()
            values[SettingsTable.Log.level] = level.rawValue
            #expect(values.problems.isEmpty, "\(level)")
        }
        for mode in AppCheckPolicy.Mode.allCases {
            var values = SettingValues()
            values[SettingsTable.AppCheck.mode] = mode.rawValue.uppercased()
            #expect(values.problems.isEmpty, "\(mode)")
        }
        var values = SettingValues()
        values[SettingsTable.Log.level] = "loud"
        values[SettingsTable.AppCheck.mode] = "strict"
        #expect(values.problems.count == 2)
    }
}
