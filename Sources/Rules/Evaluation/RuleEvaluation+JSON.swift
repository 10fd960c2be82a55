import DataModel

extension RuleEvaluation {
    /// `{"kind", "rule", "line", "column", "location", "expression", "outcome"}` (`line` and `column` only when the
    /// position is known): this evaluation as the console's simulator and its live view of evaluations show it.
    public func write(into writer: inout JSONWriter) {
        writer.writeRaw(#"{"kind":"#.utf8)
        writer.writeString(kind.rawValue)
        writer.writeRaw(#","rule":"#.utf8)
        writer.writeString(rulePath)
        if let position {
            writer.writeRaw(#","line":"#.utf8)
            writer.writeNumber(Double(position.line))
            writer.writeRaw(#","column":"#.utf8)
            writer.writeNumber(Double(position.column))
        }
        writer.writeRaw(#","location":"#.utf8)
        writer.writeString(location.description)
        writer.writeRaw(#","expression":"#.utf8)
        writer.writeString(source)
        writer.writeRaw(#","outcome":"#.utf8)
        writer.writeString(outcome.description)
        writer.writeRaw("}".utf8)
    }
}
