import ArgumentParser
import Embedded
import HTTPServer
import Logging
import Settings

/// Which web console the server serves at `/.console/`.
///
/// By default the files built into the binary (from `Console/` at build time), so a binary started from any
/// directory serves its console. A folder named by `console.directory` (`--console-dir`) is served instead, read once
/// at start: a developer editing `Console/` in a checkout sees the edits on a restart, without rebuilding. A folder
/// named that cannot be read stops the start, as any other wrong setting does.
enum ConsoleSettings {
    static func assets(from settings: SettingValues, logger: Logger) throws -> StaticAssets? {
        guard settings[SettingsTable.Console.enabled] else {
            logger.info("console.disabled", metadata: ["reason": "console.enabled is false"])
            return nil
        }
        guard let directory = settings[SettingsTable.Console.directory], !directory.isEmpty else {
            let files = EmbeddedConsole.files
            logger.info("console.files", metadata: ["source": "built in", "files": "\(files.count)"])
            return StaticAssets(files: files)
        }
        do {
            let assets = try StaticAssets(directory: directory)
            logger.info("console.files", metadata: ["source": "\(directory)", "files": "\(assets.paths.count)"])
            return assets
        } catch {
            throw ValidationError("console.directory (--console-dir): \(error)")
        }
    }
}
