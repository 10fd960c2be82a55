// The generator behind the EmbedConsole build-tool plugin: writes a Swift source holding the web console's files
// (base64 in static strings, which compile fast at any size) and the git commit of the package, if one can be read.
//
//   ConsoleEmbedder OUTPUT.swift CONSOLE_DIRECTORY PACKAGE_DIRECTORY [RELATIVE_PATH ...]
import Foundation

let arguments = CommandLine.arguments
guard arguments.count >= 4 else {
    FileHandle.standardError.write(Data("usage: ConsoleEmbedder OUTPUT CONSOLE_DIR PACKAGE_DIR [FILE ...]\n".utf8))
    exit(2)
}
let output = arguments[1]
let consoleDirectory = arguments[2]
let packageDirectory = arguments[3]
let relativePaths = arguments.dropFirst(4).sorted()

/// The most the console may hold, as `StaticAssets` allows for a directory.
let maxFileBytes = 4 << 20
let maxTotalBytes = 32 << 20

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ConsoleEmbedder: error: \(message)\n".utf8))
    exit(1)
}

/// A Swift string literal's body for `text` (paths: printable ASCII and UTF-8, escaped where needed).
func literal(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\\": out += "\\\\"
        case "\"": out += "\\\""
        case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += "\\u{\(String(scalar.value, radix: 16))}"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out
}

/// The commit checked out in `directory`, shortened; nil without git or outside a work tree.
func gitCommit(in directory: String) -> String? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["git", "-C", directory, "rev-parse", "--short=12", "HEAD"]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    do { try process.run() } catch { return nil }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { return nil }
    let commit = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard !commit.isEmpty, commit.allSatisfy(\.isHexDigit) else { return nil }
    return commit
}

var source = """
    // Generated at build time by the EmbedConsole plugin (Plugins/) from Console/: never edit, never commit.

    extension EmbeddedConsole {
        /// Every file of Console/ at build time: its path relative to Console/ and its bytes in base64.
        static let encodedFiles: [(path: String, base64: StaticString)] = [

    """
var total = 0
for path in relativePaths {
    guard let data = FileManager.default.contents(atPath: consoleDirectory + "/" + path) else {
        fail("cannot read \(consoleDirectory)/\(path)")
    }
    guard data.count <= maxFileBytes else { fail("\(consoleDirectory)/\(path) is larger than \(maxFileBytes) bytes") }
    total += data.count
    guard total <= maxTotalBytes else { fail("\(consoleDirectory) holds more than \(maxTotalBytes) bytes") }
    source += "        (\"\(literal(path))\", \"\(data.base64EncodedString())\"),\n"
}
source += "    ]\n}\n\nextension CanopyVersion {\n"
if let commit = gitCommit(in: packageDirectory) {
    source += "    /// The git commit the binary was built from.\n    public static let commit: String? = \"\(commit)\"\n"
} else {
    source += "    /// The git commit the binary was built from: unknown (no git work tree at build time).\n"
    source += "    public static let commit: String? = nil\n"
}
source += "}\n"

// Rewritten only when it changed, so an unchanged console does not recompile the module.
if FileManager.default.contents(atPath: output) != Data(source.utf8) {
    do {
        try Data(source.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
    } catch {
        fail("cannot write \(output): \(error)")
    }
}
