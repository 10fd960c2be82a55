import Foundation
import Logging
import Rules

/// Decides at start-up whether the server may serve its data, given that security rules are not enforced yet.
///
/// Without enforcement every client can read and write everything, so the server serves open data only on a
/// loopback address, or elsewhere when the operator says so with `--allow-open` (`rules.allowOpen`); both cases are
/// logged as warnings. A rules file that is present is still checked, so a broken file is caught before it matters.
enum AccessPolicy {
    /// Checks the rules file (returned when present) and the listen address.
    static func check(_ settings: CanopyConfiguration, logger: Logger) throws -> RuleSet? {
        let path = settings.rules.path
        var loaded: RuleSet?
        if FileManager.default.fileExists(atPath: path) {
            do {
                let rules = try RuleSet.load(contentsOf: path)
                loaded = rules
                for warning in rules.warnings { logger.warning("\(warning)") }
                logger.warning("""
                    rules file \(path) is valid (\(rules.coverage.count) rule expressions) but not enforced yet: \
                    every client can read and write everything
                    """)
            } catch {
                throw ConfigurationError(description: error.errors.map(\.description).joined(separator: "\n"))
            }
        }
        let loopbackOnly = ["127.0.0.1", "::1", "localhost"].contains(settings.server.host)
        guard loopbackOnly || settings.rules.allowOpen else {
            throw ConfigurationError(description: """
                security rules are not enforced yet, so every client could read and write everything: listen on a \
                loopback address, or pass --allow-open (rules.allowOpen) to serve open data on \(settings.server.host)
                """)
        }
        if loopbackOnly {
            logger.warning("no security rules enforced: all data is open to local clients (loopback only)")
        } else {
            logger.warning("no security rules enforced: all data is OPEN to anyone who can reach \(settings.server.host)")
        }
        return loaded
    }
}
