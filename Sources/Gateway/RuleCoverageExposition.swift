import Rules

/// Live rules coverage in the Prometheus text format: per rule expression, how often it evaluated true, false or
/// failed with an error since the rules were loaded, so an operator sees which rules real traffic exercises.
/// Rules are named by location and line, never by their source text.
struct RuleCoverageExposition {
    let bytes: [UInt8]

    init(_ coverage: [RuleCoverage]) {
        var text = "# TYPE canopy_rule_evaluations_total counter\n"
        for rule in coverage {
            let labels = "rule=\"\(Self.escaped(rule.rulePath))\",line=\"\(rule.position.line)\""
            for (outcome, count) in [("true", rule.trueCount), ("false", rule.falseCount), ("error", rule.errorCount)] {
                text += "canopy_rule_evaluations_total{\(labels),outcome=\"\(outcome)\"} \(count)\n"
            }
        }
        bytes = Array(text.utf8)
    }

    /// A Prometheus label value: backslash, double quote and line feed escaped.
    private static func escaped(_ value: String) -> String {
        var result = ""
        for character in value {
            switch character {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            default: result.append(character)
            }
        }
        return result
    }
}
