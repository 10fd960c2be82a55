import Foundation
import Settings

/// How the README's settings table shows a setting: one row of key, default, environment variable, flag and doc.
enum ReadmeTable {
    static let header = "| key | default | environment | flag | meaning |"

    /// The row the README should have for `setting`, as cells.
    static func expectedCells(_ setting: any AnySetting) -> [String] {
        let hasNoDefault = setting.defaultJSON == .null || setting.defaultJSON == .array([])
        return ["`\(setting.key)`", hasNoDefault ? "none" : "`\(setting.defaultText)`", "`\(setting.environmentName)`",
         setting.flag.map { "`\($0)`" } ?? "", setting.doc]
    }

    /// The whole table the README should have, to paste into it when they differ.
    static var expectedMarkdown: String {
        let rows = SettingsTable.all.map { "| " + expectedCells($0).joined(separator: " | ") + " |" }
        return ([header, "|---|---|---|---|---|"] + rows).joined(separator: "\n")
    }

    /// A row's cells, without the outer pipes and the blanks around each (a cell holds no `|`).
    static func cells(_ row: String) -> [String] {
        row.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
            .map { String($0).trimmingCharacters(in: .whitespaces) }
    }
}
