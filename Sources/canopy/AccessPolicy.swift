import Foundation
import Logging
import Rules
import Settings

/// Decides at start-up what protects the data: the rules file when there is one, otherwise nothing.
///
/// A rules file that exists is loaded and checked (a broken one stops the start with its errors) and enforced.
/// Without one every client can read and write everything, as with the emulator; that is allowed on a loopback
/// address, or elsewhere when the operator says so with `--allow-open` (`rules.allowOpen`), and logged as a warning.
enum AccessPolicy {
    /// Loads the rules file (returned when present) and checks the listen address when there is none.
    static func check(_ settings: SettingValues, logger: Logger) throws -> RuleSet? {
        let path = settings[SettingsTable.Rules.path]
        if FileManager.default.fileExists(atPath: path) {
            do {
                let rules = try RuleSet.load(contentsOf: path)
                for warning in rules.warnings { logger.warning("\(warning)") }
                logger.info("enforcing security rules from \(path) (\(rules.coverage.count) rule expressions)")
                return rules
            } catch {
                throw ConfigurationError(description: error.errors.map(\.description).joined(separator: "\n"))
            }
        }
        let loopbackOnly = settings.listensOnLoopbackOnly
        guard loopbackOnly || settings[SettingsTable.Rules.allowOpen] else {
            throw ConfigurationError(description: """
                no rules file at \(path), so every client could read and write everything: add the rules file, \
                listen on a loopback address, or pass --allow-open (rules.allowOpen) to serve open data on \
                \(settings[SettingsTable.Server.host])
                """)
        }
        if loopbackOnly {
            logger.warning("no rules file at \(path): all data is open to local clients (loopback only)")
        } else {
            logger.warning("no rules file at \(path): all data is OPEN to anyone who can reach \(settings[SettingsTable.Server.host])")
        }
        return nil
    }
}
