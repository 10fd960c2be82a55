import ArgumentParser
import DataModel
import Authorization
import Store

#if canImport(Glibc)
import Glibc
#endif

/// `canopy export`: prints a namespace (or one location of it) as Firebase export-format JSON on stdout.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Print a namespace as Firebase export JSON (offline; the server must not be running).")

    @Option(name: .customLong("data-dir"), help: "The data directory.")
    var dataDirectory: String

    @Option(name: .customLong("ns"), help: "The namespace.")
    var namespace: String = DataDirectory.defaultNamespace

    @Option(help: "The location to export.")
    var path: String = "/"

    @Flag(help: "Ignore journal corruption after the last good record instead of failing.")
    var repair = false

    func run() throws {
        guard let directory = DataDirectory.namespaceDirectory(dataDirectory, namespace: namespace) else {
            throw ValidationError("invalid namespace name \"\(namespace)\"")
        }
        let location = try Path(path)
        var output = try OfflineTools.exportJSON(directory: directory, path: location, repair: repair,
                                                    compiler: RulesPolicy.offlineCompiler)
        output.append(UInt8(ascii: "\n"))
        try writeToStandardOutput(output)
    }
}

/// Writes all of `bytes` to file descriptor 1.
func writeToStandardOutput(_ bytes: [UInt8]) throws {
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            throw ValidationError("writing to standard output failed (errno \(errno))")
        }
        offset += written
    }
}
