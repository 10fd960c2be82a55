import Foundation
import Settings
import Testing

/// The settings table is the one declaration of every setting: the configuration file shipped in `Config/`, the
/// README's settings table and `canopy serve`'s flags must say the same.
@Suite("The settings table agrees with the files that show it")
struct TableAgreementTests {
    @Test("every key is declared once")
    func keysAreUnique() {
        let keys = SettingsTable.all.map(\.key)
        #expect(Set(keys).count == keys.count)
        let flags = SettingsTable.all.compactMap(\.flag)
        #expect(Set(flags).count == flags.count)
    }

    @Test("Config/canopy.json has every setting, with its default, and nothing else")
    func configurationFile() throws {
        let file = try RepositoryFiles.configurationFile()
        let declared = Set(SettingsTable.all.map(\.key))
        #expect(declared.subtracting(file.keys).sorted() == [], "settings missing from Config/canopy.json")
        #expect(Set(file.keys).subtracting(declared).sorted() == [], "keys of Config/canopy.json the table lacks")
        for setting in SettingsTable.all {
            guard let value = file[setting.key] else { continue }
            #expect(setting.fileValue(value) == setting.defaultJSON, "\(setting.key) in Config/canopy.json")
        }
    }

    @Test("the README's settings table shows every setting's key, default, environment name, flag and doc")
    func readme() throws {
        let rows = try RepositoryFiles.readmeSettingsRows()
        let expected = SettingsTable.all.map(ReadmeTable.expectedCells)
        for (row, cells) in zip(rows, expected) {
            #expect(row == cells, "README row for \(cells[0])")
        }
        #expect(rows.count == expected.count, "README settings rows")
        if rows != expected {
            Issue.record("the README's settings table should be:\n\(ReadmeTable.expectedMarkdown)")
        }
    }

    @Test("every flag the table declares is one `canopy serve` accepts, and every flag it accepts is declared")
    func flags() throws {
        let accepted = try ServeFlags.accepted()
        let declared = Set(SettingsTable.all.compactMap(\.flag))
        #expect(declared.subtracting(accepted).sorted() == [], "flags declared but not accepted by canopy serve")
        let argumentParserFlags = ["--help", "--version"]
        let undeclared = accepted.subtracting(declared).subtracting(SettingsTable.commandOnlyFlags + argumentParserFlags)
        #expect(undeclared.sorted() == [], "flags of canopy serve the settings table does not declare")
    }
}

/// The flags `canopy serve --help` lists, from the binary built beside the tests (or `CANOPY_BIN`).
enum ServeFlags {
    struct BinaryMissing: Error, CustomStringConvertible {
        let description: String
    }

    static func accepted() throws -> Set<String> {
        let process = Process()
        process.executableURL = try binary()
        process.arguments = ["serve", "--help"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        // An option's line starts with its names: `  --port <port>  …` or `  -h, --help  …`.
        let names = text.split(separator: "\n").compactMap { line -> String? in
            let words = line.split(separator: " ").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ",")) }
            return words.prefix(2).first { $0.hasPrefix("--") }
        }
        return Set(names.filter { line in text.contains("  \(line)") })
    }

    private static func binary() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["CANOPY_BIN"] { return URL(fileURLWithPath: path) }
        let tests = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var directory = URL(fileURLWithPath: tests).deletingLastPathComponent()
        // The test binary sits in the build folder, or in `CanopyPackageTests.xctest/` inside it.
        if directory.lastPathComponent.hasSuffix(".xctest") { directory.deleteLastPathComponent() }
        let canopy = directory.appendingPathComponent("canopy")
        guard FileManager.default.isExecutableFile(atPath: canopy.path) else {
            throw BinaryMissing(description: "no canopy binary beside the tests at \(canopy.path): build it first")
        }
        return canopy
    }
}
