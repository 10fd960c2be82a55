import DataModel
import Rules

/// Rules that do not load, as the console's rules editor reads them.
enum RulesDiagnostics {
    /// `{"error": text, "diagnostics": [{"line", "column", "rule", "message"}]}`, so an editor can mark each error
    /// at its line and column.
    static func json(_ error: RulesLoadError) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.writeRaw(#"{"error":"#.utf8)
        writer.writeString(error.description)
        writer.writeRaw(#","diagnostics":["#.utf8)
        for (index, diagnostic) in error.errors.enumerated() {
            if index > 0 { writer.writeRaw(",".utf8) }
            writer.writeRaw("{".utf8)
            if let position = diagnostic.position {
                writer.writeRaw(#""line":"#.utf8)
                writer.writeNumber(Double(position.line))
                writer.writeRaw(#","column":"#.utf8)
                writer.writeNumber(Double(position.column))
                writer.writeRaw(",".utf8)
            }
            writer.writeRaw(#""rule":"#.utf8)
            writer.writeString(diagnostic.rulePath)
            writer.writeRaw(#","message":"#.utf8)
            writer.writeString(diagnostic.message)
            writer.writeRaw("}".utf8)
        }
        writer.writeRaw("]}".utf8)
        return writer.bytes
    }
}
