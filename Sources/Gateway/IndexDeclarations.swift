import DataModel
import Rules

/// The `.indexOn` declarations of the rules in force, for the `no_index` listen warning (wire-protocol.md §6.6) and
/// REST's "Index not defined" (rest-api.md §4).
///
/// Canopy always filters WebSocket queries on the server, indexed or not, but the SDKs log the "Using an unspecified
/// index" warning when the `ok` of a listen carries `{"w":["no_index"]}`, as Firebase sends for a query ordered by a
/// child (or by value) that the rules do not index — so apps find out before they deploy to Firebase.
struct IndexDeclarations: Sendable {
    private let declarations: [RulesIndexDeclaration]

    /// The declarations of a rules file (none: every child and value query warns).
    init(_ declarations: [RulesIndexDeclaration] = []) {
        self.declarations = declarations
    }

    /// Whether a query ordered by `index` at `path` is declared (`$wildcard` segments match any key); key and
    /// priority order need no declaration.
    func covers(_ index: QueryIndex, at path: Path) -> Bool {
        guard let wanted = Self.declaredName(of: index) else { return true }
        return declarations.contains { declaration in
            declaration.path.count == path.depth
                && zip(declaration.path, path.keys).allSatisfy { $0.hasPrefix("$") || $0 == $1.string }
                && declaration.keys.contains(wanted)
        }
    }

    /// How `.indexOn` names `index` (`"height"`, `"dimensions/height"`, `".value"`), `nil` for key and priority
    /// order, which need no declaration.
    static func declaredName(of index: QueryIndex) -> String? {
        switch index {
        case .child(let child): return child.keys.map(\.string).joined(separator: "/")
        case .value: return ".value"
        case .key, .priority: return nil
        }
    }
}
