import DataModel

/// Identifies one shared view of a namespace: a location and a query identity.
///
/// Listens with the same location and query share one view, whatever connection or tag they come from
/// (wire-protocol.md §6.5: the query identity is the query object with sorted keys).
struct ViewKey: Hashable, Sendable {
    /// The listened location.
    var path: Path
    /// ``QueryParams/identifier`` of the view's query (`default` for a view that loads all data).
    var queryIdentifier: String

    init(path: Path, query: QueryParams) {
        self.path = path
        self.queryIdentifier = query.identifier
    }
}
