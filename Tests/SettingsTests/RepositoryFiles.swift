import Foundation
import Settings

/// Files of the repository the settings table is compared with, found from this file's path.
enum RepositoryFiles {
    /// The repository's root directory.
    static let root: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The text of the file at `path`, relative to the root.
    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// `Config/canopy.json`, flattened to one value per dotted key (`server.port`).
    static func configurationFile() throws -> [String: JSONValue] {
        let json = try JSONDecoder().decode(JSONValue.self, from: Data(try text("Config/canopy.json").utf8))
        var flat: [String: JSONValue] = [:]
        func flatten(_ value: JSONValue, _ key: String) {
            if case .object(let object) = value {
                for (name, nested) in object { flatten(nested, key.isEmpty ? name : "\(key).\(name)") }
            } else {
                flat[key] = value
            }
        }
        flatten(json, "")
        return flat
    }

    /// The rows of the README's settings table (the one headed `| key | default | environment | flag | meaning |`),
    /// each as its cells.
    static func readmeSettingsRows() throws -> [[String]] {
        let lines = try text("README.md").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let header = lines.firstIndex(of: ReadmeTable.header) else { return [] }
        return lines[(header + 2)...].prefix { $0.hasPrefix("|") }.map(ReadmeTable.cells)
    }
}
