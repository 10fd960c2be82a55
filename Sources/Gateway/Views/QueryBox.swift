import DataModel

/// A query held by reference: views and listens keep one only when they filter, so the many default ones carry an
/// optional pointer instead of a 114-byte ``QueryParams`` each.
final class QueryBox: Sendable {
    /// The query.
    let query: QueryParams

    init(_ query: QueryParams) {
        self.query = query
    }
}
