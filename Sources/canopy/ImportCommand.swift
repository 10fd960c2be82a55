import ArgumentParser
import DataModel
import Authorization
import Store

/// `canopy import`: replaces a namespace (or one location of it) with Firebase export-format JSON from a file.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Load Firebase export JSON into a namespace (offline; the server must not be running).")

    @Argument(help: "The JSON file to import.")
    var file: String

    @Option(name: .customLong("data-dir"), help: "The data directory.")
    var dataDirectory: String

    @Option(name: .customLong("ns"), help: "The namespace (created if missing).")
    var namespace: String = DataDirectory.defaultNamespace

    @Option(help: "The location to replace.")
    var path: String = "/"

    @Flag(help: "Truncate a corrupt journal at its last good record instead of failing.")
    var repair = false

    func run() throws {
        guard let directory = DataDirectory.namespaceDirectory(dataDirectory, namespace: namespace) else {
            throw ValidationError("invalid namespace name \"\(namespace)\"")
        }
        let location = try Path(path)
        try OfflineTools.importJSON(file: file, directory: directory, path: location, repair: repair,
                                    compiler: RulesPolicy.offlineCompiler)
    }
}
