/// The namespaces any client may create (`data.namespaces`): exact names, or patterns where `*` stands for any run
/// of name characters (`chat-*`, `*`). Other namespaces are created only with the admin credential; namespaces that
/// already exist (open, or a directory in the data directory) can be reached by anyone the rules let in.
public struct NamespaceAllowList: Sendable, Equatable {
    /// The entries as configured.
    public let entries: [String]

    /// A list of `entries`: names, or patterns with `*` (the setting `data.namespaces` checks their form).
    public init(_ entries: [String]) {
        self.entries = entries
    }

    /// Whether any entry matches `name`.
    public func allows(_ name: String) -> Bool {
        let nameBytes = Array(name.utf8)
        return entries.contains { Self.matches(Array($0.utf8)[...], nameBytes[...]) }
    }

    /// Glob matching with `*` only; backtracks to the last star, so it takes at most |pattern|·|name| steps.
    private static func matches(_ pattern: ArraySlice<UInt8>, _ name: ArraySlice<UInt8>) -> Bool {
        let star = UInt8(ascii: "*")
        var p = pattern.startIndex
        var n = name.startIndex
        var lastStar: (pattern: Int, name: Int)?
        while n < name.endIndex {
            if p < pattern.endIndex, pattern[p] == star {
                lastStar = (p, n)
                p += 1
            } else if p < pattern.endIndex, pattern[p] == name[n] {
                p += 1
                n += 1
            } else if let resume = lastStar {
                p = resume.pattern + 1
                n = resume.name + 1
                lastStar = (resume.pattern, resume.name + 1)
            } else {
                return false
            }
        }
        while p < pattern.endIndex, pattern[p] == star { p += 1 }
        return p == pattern.endIndex
    }
}
