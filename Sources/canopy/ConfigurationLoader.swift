import Foundation
import Settings

/// Why the configuration could not be loaded or used; every message names the key path or file.
struct ConfigurationError: Error, CustomStringConvertible {
    let description: String
}

/// Reads the settings (``SettingsTable``): their defaults, then an optional JSON file, then `CANOPY_*` environment
/// variables (`server.idleTimeoutSeconds` is `CANOPY_SERVER_IDLE_TIMEOUT_SECONDS`). Flags are applied by the command.
enum ConfigurationLoader {
    static func load(path: String?, environment: [String: String]) throws -> SettingValues {
        var settings = SettingValues()
        if let path {
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError(description: "cannot read config file \(path)")
            }
            let file: JSONValue
            do {
                // JSONSerialization says where the text goes wrong; the decoder keeps booleans apart from numbers.
                _ = try JSONSerialization.jsonObject(with: contents)
                file = try JSONDecoder().decode(JSONValue.self, from: contents)
            } catch {
                throw ConfigurationError(description: "\(path) is not valid JSON: \(error.localizedDescription)")
            }
            do {
                try settings.apply(file: file, named: path)
            } catch {
                throw ConfigurationError(description: error.description)
            }
        }
        do {
            try settings.apply(environment: environment)
        } catch {
            throw ConfigurationError(description: error.description)
        }
        return settings
    }
}

extension SettingValues {
    /// Whether the server listens on a loopback address only (what the emulator-style defaults need).
    var listensOnLoopbackOnly: Bool {
        ["127.0.0.1", "::1", "localhost"].contains(self[SettingsTable.Server.host])
    }
}
