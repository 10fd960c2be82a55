import Foundation
import PackagePlugin

/// Builds the web console into the binary: turns every file under the package's `Console/` folder (hidden files
/// skipped) into a Swift source of the target it is applied to, with the commit the build was made from.
///
/// SwiftPM runs this on every build to plan the generator's command; the command itself reruns only when one of the
/// console's files, or the checked-out commit, changed. Nothing generated is committed, so nothing can drift.
@main
struct EmbedConsole: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        let root = context.package.directoryURL
        let console = root.appending(path: "Console")
        let files = try Self.files(under: console)
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedConsoleFiles.swift")
        let gitFiles = Self.gitStateFiles(root: root)
        return [
            .buildCommand(
                displayName: "Embedding Console into \(target.name): \(files.count) files",
                executable: try context.tool(named: "ConsoleEmbedder").url,
                arguments: [output.path(percentEncoded: false), console.path(percentEncoded: false),
                            root.path(percentEncoded: false)] + files,
                inputFiles: files.map { console.appending(path: $0) } + gitFiles,
                outputFiles: [output]),
        ]
    }

    /// Regular files under `directory`, relative to it, sorted; names starting with `.` are skipped.
    static func files(under directory: URL) throws -> [String] {
        let manager = FileManager.default
        var found: [String] = []
        func walk(_ relative: String) throws {
            let url = relative.isEmpty ? directory : directory.appending(path: relative)
            for name in try manager.contentsOfDirectory(atPath: url.path(percentEncoded: false)) where !name.hasPrefix(".") {
                let child = relative.isEmpty ? name : relative + "/" + name
                var isDirectory: ObjCBool = false
                guard manager.fileExists(atPath: directory.appending(path: child).path(percentEncoded: false),
                                         isDirectory: &isDirectory) else { continue }
                if isDirectory.boolValue { try walk(child) } else { found.append(child) }
            }
        }
        try walk("")
        return found.sorted()
    }

    /// The files whose change means another commit is checked out (`HEAD`, the branch it names, packed refs), so the
    /// commit compiled in follows `git commit` and `git checkout`. None when the package is not a git work tree.
    static func gitStateFiles(root: URL) -> [URL] {
        let gitDirectory = root.appending(path: ".git")
        let head = gitDirectory.appending(path: "HEAD")
        guard let text = try? String(contentsOf: head, encoding: .utf8) else { return [] }
        var files = [head]
        let packed = gitDirectory.appending(path: "packed-refs")
        if FileManager.default.fileExists(atPath: packed.path(percentEncoded: false)) { files.append(packed) }
        if text.hasPrefix("ref: ") {
            let reference = gitDirectory.appending(path: text.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines))
            if FileManager.default.fileExists(atPath: reference.path(percentEncoded: false)) { files.append(reference) }
        }
        return files
    }
}
