import Logging

/// Bootstraps swift-log: human-readable lines by default, JSON lines with `--log-format json`.
enum LoggingSetup {
    static func bootstrap(format: String, level: String) -> Logger {
        let logLevel = Logger.Level(rawValue: level.lowercased()) ?? .info
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler =
                format.lowercased() == "json" ? JSONLogHandler(label: label) : StreamLogHandler.standardError(label: label)
            handler.logLevel = logLevel
            return handler
        }
        return Logger(label: "canopy")
    }
}
